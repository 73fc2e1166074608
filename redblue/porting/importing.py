"""An event file into a workspace: one transaction, all or nothing.

Every entry goes through the console's own input serializer and then the same service the
console and the admin call (`challenge_create`/`challenge_update`, …), so a file is held to
exactly the console's rules; this module only maps each refusal back to the file's line.

What an entry does to the workspace (docs/import-export.md):
- a slug (a red/blue challenge: a name) the workspace already has is updated in place, and
  a key the entry leaves out takes its default: the entry is the whole definition;
- a challenge or collection slug held by another workspace is refused (slugs are unique
  across the site);
- rows the file does not mention are left alone; nothing is deleted.
"""

import re
import secrets as random_secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from jsonschema import Draft202012Validator
from rest_framework import serializers

from challenges.inputs import (
    BountyInputSerializer,
    ChallengeInputSerializer,
    CollectionInputSerializer,
    HintInputSerializer,
    WaveInputSerializer,
)
from challenges.models import Bounty, Challenge, ChallengeCollection, Hint, Secret, Wave
from challenges.services.bounties import bounty_create, bounty_update
from challenges.services.challenges import CHALLENGE_FIELDS, challenge_create, challenge_update
from challenges.services.collections import (
    COLLECTION_FIELDS,
    collection_create,
    collection_set_challenges,
    collection_update,
)
from challenges.services.hints import hint_create, hint_delete, hint_update
from challenges.services.prerequisites import FIELD as PREREQUISITE_FIELD
from challenges.services.prerequisites import challenge_set_prerequisites
from challenges.services.secrets import secret_create, secret_update
from challenges.services.waves import wave_create, wave_update
from core.errors import ApplicationError
from players.models import Workspace
from redblue.models import RedBlueChallenge
from redblue.porting.document import (
    EventDocument,
    EventFileInvalid,
    Path,
    Problem,
    event_parse,
    key_line,
)
from redblue.porting.schema import (
    CHALLENGE_KEY,
    COLLECTION_KEY,
    CURRENCY_PATTERN,
    RED_BLUE_KEY,
    WAVE_KEY,
    event_schema,
)
from redblue.teams.serializers import RedBlueChallengeInputSerializer
from redblue.teams.services.challenges import (
    RED_BLUE_FIELDS,
    red_blue_challenge_create,
    red_blue_challenge_update,
)

CHALLENGES, COLLECTIONS, RED_BLUE, SECRETS, WAVES, BOUNTIES = (
    "challenges",
    "collections",
    "red_blue_challenges",
    "secrets",
    "waves",
    "bounties",
)
GENERATED_SECRET_BYTES = 18
# "Layer 2: …" / "Category 3: …": the services number list items from 1.
_ITEM_NUMBER = re.compile(r"^(?:Layer|Category) (\d+)\b")


@dataclass
class ImportSummary:
    created: dict[str, list[str]] = field(default_factory=dict)
    updated: dict[str, list[str]] = field(default_factory=dict)
    # Secrets made with a fresh random value, by name; the value is never shown.
    secrets_generated: list[str] = field(default_factory=list)

    def note(self, kind: str, key: str, *, created: bool) -> None:
        (self.created if created else self.updated).setdefault(kind, []).append(key)

    def as_dict(self) -> dict[str, Any]:
        kinds = (SECRETS, CHALLENGES, COLLECTIONS, RED_BLUE, WAVES, BOUNTIES)
        return {
            "created": {kind: self.created.get(kind, []) for kind in kinds},
            "updated": {kind: self.updated.get(kind, []) for kind in kinds},
            "secrets_generated": self.secrets_generated,
        }


# --- Checks that need no database ----------------------------------------------------------


def _schema_message(error: Any) -> str:
    expected = error.validator_value
    messages = {
        "type": lambda: f"Must be {_type_words(expected)}.",
        "enum": lambda: "Must be one of: " + ", ".join(str(item) for item in expected) + ".",
        "const": lambda: f"Must be {expected!r}.",
        "maxLength": lambda: f"At most {expected} characters.",
        "minLength": lambda: "May not be empty.",
        "maxItems": lambda: f"At most {expected} items.",
        "minimum": lambda: f"At least {expected}.",
        "maximum": lambda: f"At most {expected}.",
        "pattern": lambda: (
            "An ISO 4217 code such as USD."
            if expected == CURRENCY_PATTERN
            else "Use letters, digits, '-' and '_' only."
        ),
        "uniqueItems": lambda: "Each item may appear once.",
    }
    if error.validator in messages:
        return messages[error.validator]()
    if error.validator in ("anyOf", "oneOf"):
        types = [option.get("type") for option in expected]
        if all(types):
            return f"Must be {_type_words(types)}."
    message = error.message
    return message if len(message) <= 200 else message[:200] + "…"


def _type_words(expected: Any) -> str:
    words = {
        "string": "text",
        "object": "a mapping",
        "array": "a list",
        "integer": "a whole number",
        "number": "a number",
        "boolean": "true or false",
        "null": "null",
    }
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join(words.get(name, name) for name in names)


def _schema_problems(document: EventDocument) -> list[Problem]:
    validator = Draft202012Validator(event_schema())
    problems = []
    for error in validator.iter_errors(document.data):
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties":
            known = set(error.schema.get("properties", {}))
            for key in sorted(set(error.instance) - known):
                line = key_line(document.root, path, key)
                problems.append(Problem(line, (*path, key), "Unknown field."))
            continue
        if error.validator == "required":
            for missing in error.validator_value:
                if missing not in error.instance:
                    problems.append(document.problem((*path, missing), "Required, and missing."))
            continue
        problems.append(document.problem(path, _schema_message(error)))
    return problems


def _repeated_key_problems(document: EventDocument) -> list[Problem]:
    problems = []
    for kind, key in (
        (CHALLENGES, CHALLENGE_KEY),
        (COLLECTIONS, COLLECTION_KEY),
        (RED_BLUE, RED_BLUE_KEY),
        (WAVES, WAVE_KEY),
    ):
        seen: set[str] = set()
        for index, entry in enumerate(document.data.get(kind) or []):
            value = entry.get(key)
            if value in seen:
                problems.append(
                    document.problem((kind, index, key), f"Another entry above has this {key}.")
                )
            seen.add(value)
    seen_bounties: set[tuple] = set()
    for index, entry in enumerate(document.data.get(BOUNTIES) or []):
        value = _bounty_key(entry)
        if value in seen_bounties:
            problems.append(
                document.problem(
                    (BOUNTIES, index),
                    "Another bounty above has this challenge, codename and kind.",
                )
            )
        seen_bounties.add(value)
    return problems


def _bounty_key(entry: Mapping[str, Any]) -> tuple:
    return (entry.get("challenge"), (entry.get("codename") or "").strip(), entry.get("kind"))


def event_check(document: EventDocument) -> None:
    """The file against the published schema, and keys unique within each list."""
    problems = _schema_problems(document)
    if not problems:
        problems = _repeated_key_problems(document)
    if problems:
        raise EventFileInvalid(problems)


def secret_values_parse(text: str) -> dict[str, str]:
    """A `--secrets` file: a YAML mapping of secret name to value (text only)."""
    document = event_parse(text)
    problems = [
        document.problem(
            (name,), 'A value must be text: quote it ("1234") so YAML keeps it exactly.'
        )
        for name, value in document.data.items()
        if not isinstance(value, str)
    ]
    if problems:
        raise EventFileInvalid(problems)
    return dict(document.data)


# --- The import ---------------------------------------------------------------------------


def _listed_secrets(document: EventDocument) -> list[str]:
    return list(document.data.get(SECRETS) or [])


def event_secrets_missing(
    *, workspace: Workspace, document: EventDocument, secret_values: Mapping[str, str]
) -> list[str]:
    """Secrets the file lists that neither the workspace nor `secret_values` has a value for."""
    existing = set(Secret.objects.filter(workspace=workspace).values_list("name", flat=True))
    return [
        name
        for name in _listed_secrets(document)
        if name not in existing and not secret_values.get(name)
    ]


def _untrimmed(serializer: serializers.Serializer) -> serializers.Serializer:
    # The console trims text a person typed; a file's text is kept exactly as written, so
    # that export → import → export gives the same bytes.
    for item in serializer.fields.values():
        for field_ in (item, getattr(item, "child", None)):
            if isinstance(field_, serializers.CharField):
                field_.trim_whitespace = False
    return serializer


def _detail_problems(document: EventDocument, path: Path, detail: Any) -> Iterable[Problem]:
    if isinstance(detail, dict):
        for key, value in detail.items():
            part = int(key) if isinstance(key, int) or str(key).isdigit() else str(key)
            yield from _detail_problems(document, (*path, part), value)
    elif isinstance(detail, list) and detail and not all(isinstance(d, str) for d in detail):
        for value in detail:
            yield from _detail_problems(document, path, value)
    else:
        for message in detail if isinstance(detail, list) else [detail]:
            yield document.problem(path, str(message))


def _refusal_problems(
    document: EventDocument, path: Path, error: ApplicationError, fields_at: dict[str, Path]
) -> Iterable[Problem]:
    if not error.fields:
        yield document.problem(path, error.message)
        return
    for name, messages in error.fields.items():
        for message in messages if isinstance(messages, list) else [messages]:
            at = (*path, *fields_at.get(name, (name,)))
            number = _ITEM_NUMBER.match(str(message))
            if number:
                at = (*at, int(number.group(1)) - 1)
            yield document.problem(at, str(message))


def _fields_with_defaults(model: type, names: tuple[str, ...], given: dict) -> dict[str, Any]:
    # An entry is a whole definition: what it leaves out takes the model's default, on an
    # update as on a create.
    values = {name: model._meta.get_field(name).get_default() for name in names}
    values.update(given)
    return values


@dataclass
class _Run:
    workspace: Workspace
    document: EventDocument
    user: AbstractBaseUser | None
    summary: ImportSummary = field(default_factory=ImportSummary)
    problems: list[Problem] = field(default_factory=list)

    def refuse(self, path: Path, message: str) -> None:
        self.problems.append(self.document.problem(path, message))

    def validated(
        self, serializer_class: type, entry: dict[str, Any], path: Path
    ) -> dict[str, Any] | None:
        serializer = _untrimmed(serializer_class(data=entry))
        if serializer.is_valid():
            return dict(serializer.validated_data)
        self.problems.extend(_detail_problems(self.document, path, serializer.errors))
        return None

    def saved(self, path: Path, write: Any, *, fields_at: dict[str, Path] | None = None) -> Any:
        """Run one service call in its own savepoint; a refusal becomes a problem.

        `fields_at` places a service's field under another path (its `prerequisite_ids`
        is the file's `prerequisites`)."""
        try:
            with transaction.atomic():
                return write()
        except ApplicationError as error:
            self.problems.extend(_refusal_problems(self.document, path, error, fields_at or {}))
        except IntegrityError:
            self.refuse(path, "Another row took this slug or name meanwhile; try again.")
        return None


def _import_secrets(run: _Run, values: Mapping[str, str]) -> None:
    existing = {s.name: s for s in Secret.objects.filter(workspace=run.workspace).defer("value")}
    for index, name in enumerate(_listed_secrets(run.document)):
        path = (SECRETS, index)
        value = values.get(name)
        if name in existing:
            if value and run.saved(
                path, partial(secret_update, secret=existing[name], value=value)
            ):
                run.summary.note(SECRETS, name, created=False)
            continue
        if not value:
            value = random_secrets.token_urlsafe(GENERATED_SECRET_BYTES)
            run.summary.secrets_generated.append(name)
        if run.saved(path, partial(secret_create, workspace=run.workspace, name=name, value=value)):
            run.summary.note(SECRETS, name, created=True)


def _import_challenges(run: _Run) -> dict[int, Challenge]:
    """Each challenge entry with its hints; the challenges saved, by entry index."""
    taken_elsewhere = _taken_elsewhere(run, Challenge, CHALLENGES, CHALLENGE_KEY)
    current = {c.slug: c for c in Challenge.objects.filter(workspace=run.workspace)}
    saved: dict[int, Challenge] = {}
    for index, entry in enumerate(run.document.data.get(CHALLENGES) or []):
        path, slug = (CHALLENGES, index), entry[CHALLENGE_KEY]
        if slug in taken_elsewhere:
            run.refuse((*path, CHALLENGE_KEY), _TAKEN.format(kind="challenge", slug=slug))
            continue
        own = {k: v for k, v in entry.items() if k not in _CHALLENGE_RELATIONS}
        given = run.validated(ChallengeInputSerializer, own, path)
        if given is None:
            continue
        fields = _fields_with_defaults(Challenge, CHALLENGE_FIELDS, given)
        existing = current.get(slug)
        if existing is None:
            write = partial(challenge_create, workspace=run.workspace, user=run.user, **fields)
        else:
            write = partial(challenge_update, challenge=existing, user=run.user, **fields)
        challenge = run.saved(path, write)
        if challenge is not None:
            saved[index] = challenge
            run.summary.note(CHALLENGES, slug, created=existing is None)
            _import_hints(run, (*path, "hints"), challenge, entry.get("hints") or [])
    return saved


_CHALLENGE_RELATIONS = ("hints", "prerequisites")


def _import_hints(run: _Run, path: Path, challenge: Challenge, entries: list[dict]) -> None:
    """The challenge's hints become the file's. A file hint updates the challenge's hint of
    the same `order` (so what players paid for stays theirs), others are created, and
    hints the file no longer has are deleted with their unlocks."""
    current: dict[int, list[Hint]] = {}
    for hint in Hint.objects.filter(challenge=challenge).order_by("order", "created_at", "id"):
        current.setdefault(hint.order, []).append(hint)
    for place, entry in enumerate(entries):
        given = run.validated(HintInputSerializer, entry, (*path, place))
        if given is None:
            continue
        fields = {"order": place + 1, "cost": 0, **given}
        same_order = current.get(fields["order"])
        if same_order:
            write = partial(hint_update, hint=same_order.pop(0), **fields)
        else:
            write = partial(hint_create, challenge=challenge, **fields)
        run.saved((*path, place), write)
    for left in current.values():
        for hint in left:
            hint_delete(hint=hint)


def _import_prerequisites(run: _Run, saved: dict[int, Challenge]) -> None:
    """After every challenge exists, so an entry may require one further down the file."""
    ids = dict(Challenge.objects.filter(workspace=run.workspace).values_list("slug", "id"))
    entries = run.document.data.get(CHALLENGES) or []
    for index, challenge in saved.items():
        path = (CHALLENGES, index, "prerequisites")
        slugs = entries[index].get("prerequisites") or []
        unknown = [place for place, slug in enumerate(slugs) if slug not in ids]
        for place in unknown:
            run.refuse(
                (*path, place),
                f"No challenge with the slug '{slugs[place]}' in this file or this workspace.",
            )
        if unknown:
            continue
        prerequisite_ids = [ids[slug] for slug in slugs]
        run.saved(
            path,
            partial(
                challenge_set_prerequisites, challenge=challenge, prerequisite_ids=prerequisite_ids
            ),
            fields_at={PREREQUISITE_FIELD: ()},
        )


_TAKEN = (
    "The {kind} slug '{slug}' belongs to another workspace (slugs are unique across the "
    "site): give this {kind} another slug in the file."
)


def _taken_elsewhere(run: _Run, model: type, kind: str, key: str) -> set[str]:
    wanted = [entry[key] for entry in run.document.data.get(kind) or []]
    return set(
        model.objects.filter(**{f"{key}__in": wanted})
        .exclude(workspace=run.workspace)
        .values_list(key, flat=True)
    )


def _import_collections(run: _Run) -> None:
    taken_elsewhere = _taken_elsewhere(run, ChallengeCollection, COLLECTIONS, COLLECTION_KEY)
    current = {c.slug: c for c in ChallengeCollection.objects.filter(workspace=run.workspace)}
    challenge_ids = dict(
        Challenge.objects.filter(workspace=run.workspace).values_list("slug", "id")
    )
    challenges_in_file = {entry[CHALLENGE_KEY] for entry in run.document.data.get(CHALLENGES) or []}
    for index, entry in enumerate(run.document.data.get(COLLECTIONS) or []):
        path, slug = (COLLECTIONS, index), entry[COLLECTION_KEY]
        if slug in taken_elsewhere:
            run.refuse((*path, COLLECTION_KEY), _TAKEN.format(kind="collection", slug=slug))
            continue
        members = list(entry.get("challenges") or [])
        ids, unresolved = [], False
        for position, member in enumerate(members):
            if member in challenge_ids:
                ids.append(challenge_ids[member])
                continue
            unresolved = True
            if member not in challenges_in_file:  # else its own entry already says why
                run.refuse(
                    (*path, "challenges", position),
                    f"No challenge with the slug '{member}' in this file or this workspace.",
                )
        entry_fields = {k: v for k, v in entry.items() if k != "challenges"}
        given = run.validated(CollectionInputSerializer, entry_fields, path)
        if given is None or unresolved:
            continue
        fields = _fields_with_defaults(ChallengeCollection, COLLECTION_FIELDS, given)
        existing = current.get(slug)

        def write(existing=existing, fields=fields, ids=ids):
            if existing is None:
                collection = collection_create(workspace=run.workspace, user=run.user, **fields)
            else:
                collection = collection_update(collection=existing, **fields)
            return collection_set_challenges(collection=collection, challenge_ids=ids)

        if run.saved(path, write):
            run.summary.note(COLLECTIONS, slug, created=existing is None)


def _import_red_blue(run: _Run) -> None:
    current: dict[str, RedBlueChallenge] = {}
    for challenge in RedBlueChallenge.objects.filter(workspace=run.workspace).order_by(
        "created_at"
    ):
        current.setdefault(challenge.name, challenge)
    for index, entry in enumerate(run.document.data.get(RED_BLUE) or []):
        path, name = (RED_BLUE, index), entry[RED_BLUE_KEY]
        given = run.validated(RedBlueChallengeInputSerializer, entry, path)
        if given is None:
            continue
        fields = _fields_with_defaults(RedBlueChallenge, RED_BLUE_FIELDS, given)
        existing = current.get(name)
        if existing is None:
            write = partial(
                red_blue_challenge_create, workspace=run.workspace, user=run.user, **fields
            )
        else:
            write = partial(red_blue_challenge_update, challenge=existing, user=run.user, **fields)
        if run.saved(path, write):
            run.summary.note(RED_BLUE, name, created=existing is None)


def _challenge_ids_by_slug(run: _Run) -> dict[str, Any]:
    return dict(Challenge.objects.filter(workspace=run.workspace).values_list("slug", "id"))


def _unknown_challenge(run: _Run, path: Path, slug: str) -> None:
    # A challenge entry the file refused already says why; its slug is not repeated here.
    in_file = {entry[CHALLENGE_KEY] for entry in run.document.data.get(CHALLENGES) or []}
    if slug not in in_file:
        run.refuse(path, f"No challenge with the slug '{slug}' in this file or this workspace.")


def _import_waves(run: _Run) -> None:
    """Waves by name: one the workspace has is moved, renamed or given the file's
    challenges (moved to new times, it is announced again); others are created."""
    current: dict[str, Wave] = {}
    for wave in Wave.objects.filter(workspace=run.workspace).order_by("created_at", "id"):
        current.setdefault(wave.name, wave)
    ids = _challenge_ids_by_slug(run)
    for index, entry in enumerate(run.document.data.get(WAVES) or []):
        path, name = (WAVES, index), entry[WAVE_KEY]
        slugs = list(entry.get("challenges") or [])
        unresolved = [place for place, slug in enumerate(slugs) if slug not in ids]
        for place in unresolved:
            _unknown_challenge(run, (*path, "challenges", place), slugs[place])
        # The console's serializer reads ids; the file's slugs were resolved above.
        given = run.validated(WaveInputSerializer, {**entry, "challenges": []}, path)
        if given is None or unresolved:
            continue
        challenge_ids = [str(ids[slug]) for slug in slugs]
        existing = current.get(name)
        if existing is None:
            write = partial(
                wave_create,
                workspace=run.workspace,
                name=given["name"],
                challenge_ids=challenge_ids,
                opens_at=given["opens_at"],
                closes_at=given["closes_at"],
            )
        else:
            write = partial(
                wave_update,
                wave=existing,
                name=given["name"],
                challenge_ids=challenge_ids,
                opens_at=given["opens_at"],
                closes_at=given["closes_at"],
            )
        if run.saved(path, write):
            run.summary.note(WAVES, name, created=existing is None)


def _bounty_label(slug: str, codename: str, kind: str) -> str:
    return f"{slug} {kind}" + (f" ({codename})" if codename else "")


def _import_bounties(run: _Run) -> None:
    """Bounties by challenge slug, codename and kind: the workspace's bounty with the same
    three gets the file's amount, currency and cap; others are created. Bounties the file
    does not name are left as they are (what was offered may have been won)."""
    challenges = {c.slug: c for c in Challenge.objects.filter(workspace=run.workspace)}
    current: dict[tuple, Bounty] = {}
    for bounty in (
        Bounty.objects.filter(challenge__workspace=run.workspace)
        .select_related("challenge")
        .order_by("created_at", "id")
    ):
        current.setdefault((bounty.challenge.slug, bounty.codename, bounty.kind), bounty)
    for index, entry in enumerate(run.document.data.get(BOUNTIES) or []):
        path, slug = (BOUNTIES, index), entry.get("challenge")
        given = run.validated(BountyInputSerializer, entry, path)
        if given is None:
            continue
        challenge = challenges.get(slug)
        if challenge is None:
            _unknown_challenge(run, (*path, "challenge"), slug)
            continue
        fields = {
            "kind": given["kind"],
            "amount": given["amount"],
            "codename": (given.get("codename") or "").strip(),
            "currency": given.get("currency") or "USD",
            "cap": given.get("cap"),
        }
        key = (slug, fields["codename"], fields["kind"])
        existing = current.get(key)
        if existing is None:
            write = partial(bounty_create, challenge=challenge, **fields)
        else:
            write = partial(bounty_update, bounty=existing, **fields)
        if run.saved(path, write):
            run.summary.note(BOUNTIES, _bounty_label(*key), created=existing is None)


def event_import(
    *,
    workspace: Workspace,
    document: EventDocument,
    user: AbstractBaseUser | None,
    secret_values: Mapping[str, str] | None = None,
) -> ImportSummary:
    """Create or update everything the file holds in `workspace`, or nothing at all.

    `secret_values` (name → value) sets those secrets; a listed secret that neither it nor
    the workspace has a value for gets a fresh random one, named in the summary.
    """
    event_check(document)
    values = dict(secret_values or {})
    unlisted = sorted(set(values) - set(_listed_secrets(document)))
    if unlisted:
        raise ApplicationError(
            "The secret values name secrets the file does not list: " + ", ".join(unlisted) + ".",
            fields={"secrets": [f"Not in the file: {name}" for name in unlisted]},
        )
    run = _Run(workspace=workspace, document=document, user=user)
    with transaction.atomic():
        # Two imports into one workspace run one after the other, not interleaved.
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        _import_secrets(run, values)
        saved = _import_challenges(run)
        _import_prerequisites(run, saved)
        _import_collections(run)
        _import_red_blue(run)
        _import_waves(run)
        _import_bounties(run)
        if run.problems:
            # Leaving the block with an error rolls back every row written above.
            raise EventFileInvalid(run.problems)
    return run.summary
