"""Collections of challenges: creating, changing and filling them."""

import uuid
from typing import Any, TypedDict, Unpack

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from challenges.models import Challenge, ChallengeCollection, CollectionItem
from core.errors import ApplicationError
from core.services import model_update
from core.slugs import unique_slug
from core.theme import theme_errors
from players.models import Workspace


class CollectionFields(TypedDict, total=False):
    app_id: str
    name: str
    slug: str
    description: str
    instructions_md: str
    theme: dict[str, Any]
    is_public: bool
    in_order: bool
    scoring_strategy: str
    scoring_plugin_id: str
    scoring_entrypoint: str
    scoring_config: dict[str, Any]


COLLECTION_FIELDS = tuple(CollectionFields.__annotations__)
MAX_CHALLENGES_PER_COLLECTION = 200
# Plugin-scored collections would need a scorer run per player on every board read; until
# their scores are kept per player, `custom` is refused here rather than failing on read.
OFFERED_STRATEGIES = [
    strategy
    for strategy in ChallengeCollection.Strategy.values
    if strategy != ChallengeCollection.Strategy.CUSTOM
]


def collection_errors(data: dict[str, Any]) -> dict[str, list[str]]:
    """Every problem with a collection's full set of values, keyed by field name."""
    errors: dict[str, list[str]] = {}

    def add(field: str, message: str) -> None:
        errors.setdefault(field, []).append(message)

    if not str(data.get("name") or "").strip():
        add("name", "A collection needs a name.")
    strategy = data.get("scoring_strategy")
    if strategy not in OFFERED_STRATEGIES:
        add("scoring_strategy", "Use one of " + ", ".join(OFFERED_STRATEGIES) + ".")
    for message in theme_errors(data.get("theme") or {}):
        add("theme", message)
    if not isinstance(data.get("scoring_config") or {}, dict):
        add("scoring_config", "Must be an object.")
    return errors


def _collection_errors_of(collection: ChallengeCollection) -> dict[str, list[str]]:
    errors = collection_errors({name: getattr(collection, name) for name in COLLECTION_FIELDS})
    if collection.slug:
        clash = ChallengeCollection.objects.filter(slug=collection.slug).exclude(id=collection.id)
        if clash.exists():
            errors.setdefault("slug", []).append("This slug is taken.")
    return errors


def _save(collection: ChallengeCollection) -> None:
    # The slug check above can lose a race; the unique index settles it.
    try:
        with transaction.atomic():
            collection.save()
    except IntegrityError:
        raise ApplicationError(
            "This slug is taken.", code="conflict", status=409, fields={"slug": ["Taken."]}
        ) from None


def collection_create(
    *, workspace: Workspace, user: AbstractBaseUser | None, **fields: Unpack[CollectionFields]
) -> ChallengeCollection:
    collection = ChallengeCollection(workspace=workspace, created_by=user)
    model_update(
        instance=collection, data=fields, fields=COLLECTION_FIELDS, errors=_collection_errors_of
    )
    if not collection.slug:
        collection.slug = unique_slug(
            model=ChallengeCollection, text=collection.name, fallback="collection"
        )
    _save(collection)
    return collection


def collection_update(
    *, collection: ChallengeCollection, **fields: Unpack[CollectionFields]
) -> ChallengeCollection:
    model_update(
        instance=collection, data=fields, fields=COLLECTION_FIELDS, errors=_collection_errors_of
    )
    if not collection.slug:
        collection.slug = unique_slug(
            model=ChallengeCollection,
            text=collection.name,
            fallback="collection",
            exclude_id=collection.id,
        )
    _save(collection)
    return collection


def collection_delete(*, collection: ChallengeCollection) -> None:
    collection.delete()


def _parsed_ids(challenge_ids: Any) -> tuple[list[uuid.UUID], list[str]]:
    if not isinstance(challenge_ids, list):
        raise ApplicationError(
            "'challenge_ids' must be a list of challenge ids.",
            fields={"challenge_ids": ["A list of challenge ids."]},
        )
    if len(challenge_ids) > MAX_CHALLENGES_PER_COLLECTION:
        raise ApplicationError(
            f"A collection holds at most {MAX_CHALLENGES_PER_COLLECTION} challenges.",
            fields={"challenge_ids": [f"At most {MAX_CHALLENGES_PER_COLLECTION} ids."]},
        )
    parsed, malformed = [], []
    for raw in challenge_ids:
        try:
            parsed.append(uuid.UUID(str(raw)))
        except ValueError:
            malformed.append(str(raw)[:64])
    return parsed, malformed


def collection_set_challenges(
    *, collection: ChallengeCollection, challenge_ids: list[Any]
) -> ChallengeCollection:
    """Make `challenge_ids`, in this order, the collection's challenges; all or nothing."""
    ids, malformed = _parsed_ids(challenge_ids)
    duplicates = sorted({str(i) for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ApplicationError(
            "Each challenge may appear once: " + ", ".join(duplicates) + ".",
            fields={"challenge_ids": [f"Listed more than once: {i}" for i in duplicates]},
        )
    known = set(
        Challenge.objects.filter(workspace_id=collection.workspace_id, id__in=ids).values_list(
            "id", flat=True
        )
    )
    # Another workspace's challenge reads exactly like one that does not exist.
    bad = malformed + [str(i) for i in ids if i not in known]
    if bad:
        raise ApplicationError(
            "These are not challenges of this collection's workspace: " + ", ".join(bad) + ".",
            fields={"challenge_ids": [f"Unknown challenge: {i}" for i in bad]},
        )
    with transaction.atomic():
        # The lock makes concurrent replacements of the same list queue up, not interleave.
        ChallengeCollection.objects.select_for_update().filter(pk=collection.pk).first()
        CollectionItem.objects.filter(collection=collection).delete()
        CollectionItem.objects.bulk_create(
            CollectionItem(collection=collection, challenge_id=challenge_id, position=position)
            for position, challenge_id in enumerate(ids)
        )
        collection.save(update_fields=["updated_at"])
    return collection
