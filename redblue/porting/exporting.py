"""A workspace's challenges as an event file: every creator-set field, references by slug,
secrets by name, no ids and no timestamps of ours, in one stable order."""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from challenges.models import (
    Bounty,
    Challenge,
    ChallengeCollection,
    ChallengePrerequisite,
    CollectionItem,
    Hint,
    Secret,
    Wave,
)
from challenges.services.challenges import CHALLENGE_FIELDS
from challenges.services.collections import COLLECTION_FIELDS
from challenges.services.hints import HINT_FIELDS
from core.errors import ApplicationError
from players.models import Workspace
from redblue.models import RedBlueChallenge
from redblue.porting.document import event_dump
from redblue.porting.schema import (
    CHALLENGE_KEY,
    COLLECTION_KEY,
    FORMAT_VERSION,
    RED_BLUE_KEY,
    WAVE_KEY,
)
from redblue.teams.services.challenges import RED_BLUE_FIELDS


def _ordered_fields(fields: tuple[str, ...], key: str) -> list[str]:
    return [
        key,
        *(["name"] if key != "name" else []),
        *(f for f in fields if f not in (key, "name")),
    ]


def _plain(value: Any) -> Any:
    """A value as the file holds it: JSON keys sorted (PostgreSQL's jsonb and SQLite keep
    different orders), instants in UTC, decimals as numbers."""
    if isinstance(value, dict):
        return {key: _plain(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, Decimal):
        return float(value)
    return value


def _entry(row: Any, fields: list[str]) -> dict[str, Any]:
    return {name: _plain(getattr(row, name)) for name in fields}


def event_data(*, workspace: Workspace) -> dict[str, Any]:
    challenge_fields = _ordered_fields(CHALLENGE_FIELDS, CHALLENGE_KEY)
    hints: dict[Any, list[dict[str, Any]]] = {}
    for hint in Hint.objects.filter(challenge__workspace=workspace).order_by(
        "challenge_id", "order", "created_at", "id"
    ):
        hints.setdefault(hint.challenge_id, []).append(_entry(hint, list(HINT_FIELDS)))
    prerequisites: dict[Any, list[str]] = {}
    for challenge_id, slug in ChallengePrerequisite.objects.filter(
        challenge__workspace=workspace
    ).values_list("challenge_id", "prerequisite__slug"):
        prerequisites.setdefault(challenge_id, []).append(slug)
    # Sorted here, not by the database: its collation may differ from the next one's.
    challenges = sorted(
        (
            {
                **_entry(row, challenge_fields),
                "hints": hints.get(row.id, []),
                "prerequisites": sorted(prerequisites.get(row.id, [])),
            }
            for row in Challenge.objects.filter(workspace=workspace)
        ),
        key=lambda entry: entry[CHALLENGE_KEY],
    )

    members: dict[Any, list[str]] = {}
    items = CollectionItem.objects.filter(collection__workspace=workspace).order_by(
        "collection_id", "position", "id"
    )
    for collection_id, slug in items.values_list("collection_id", "challenge__slug"):
        members.setdefault(collection_id, []).append(slug)
    collection_fields = _ordered_fields(COLLECTION_FIELDS, COLLECTION_KEY)
    collections = sorted(
        (
            {**_entry(row, collection_fields), "challenges": members.get(row.id, [])}
            for row in ChallengeCollection.objects.filter(workspace=workspace)
        ),
        key=lambda entry: entry[COLLECTION_KEY],
    )

    red_blue_rows = sorted(
        RedBlueChallenge.objects.filter(workspace=workspace), key=lambda row: row.name
    )
    _refuse_repeated_names("red/blue challenges", [row.name for row in red_blue_rows])
    red_blue_fields = _ordered_fields(RED_BLUE_FIELDS, RED_BLUE_KEY)
    red_blue = [_entry(row, red_blue_fields) for row in red_blue_rows]

    secrets = sorted(Secret.objects.filter(workspace=workspace).values_list("name", flat=True))
    return {
        "version": FORMAT_VERSION,
        "secrets": secrets,
        "challenges": challenges,
        "collections": collections,
        "red_blue_challenges": red_blue,
        "waves": _waves(workspace),
        "bounties": _bounties(workspace),
    }


def _refuse_repeated_names(kind: str, names: list[str]) -> None:
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        # A file names these by their name; two alike could not be told apart.
        raise ApplicationError(
            f"Two {kind} of this workspace share a name: "
            + ", ".join(repeated)
            + ". Rename one (a file refers to them by name), then export again.",
            code="conflict",
            status=409,
        )


def _waves(workspace: Workspace) -> list[dict[str, Any]]:
    """Each wave with its challenges by slug; its `state` is ours (what beat announced)."""
    members: dict[Any, list[str]] = {}
    for wave_id, slug in Wave.challenges.through.objects.filter(
        wave__workspace=workspace
    ).values_list("wave_id", "challenge__slug"):
        members.setdefault(wave_id, []).append(slug)
    rows = sorted(Wave.objects.filter(workspace=workspace), key=lambda row: row.name)
    _refuse_repeated_names("waves", [row.name for row in rows])
    return [
        {
            WAVE_KEY: row.name,
            "challenges": sorted(members.get(row.id, [])),
            "opens_at": _plain(row.opens_at),
            "closes_at": _plain(row.closes_at),
        }
        for row in rows
    ]


def _bounties(workspace: Workspace) -> list[dict[str, Any]]:
    """Each bounty by its challenge's slug and codename; who earned it stays here."""
    entries = [
        {
            "challenge": slug,
            "codename": codename,
            "kind": kind,
            "amount": _plain(amount),
            "currency": currency,
            "cap": _plain(cap),
        }
        for slug, codename, kind, amount, currency, cap in Bounty.objects.filter(
            challenge__workspace=workspace
        ).values_list("challenge__slug", "codename", "kind", "amount", "currency", "cap")
    ]
    return sorted(
        entries,
        key=lambda e: (
            e["challenge"],
            e["codename"],
            e["kind"],
            e["amount"],
            e["currency"],
            e["cap"] if e["cap"] is not None else -1,
        ),
    )


def event_export(*, workspace: Workspace) -> str:
    """The workspace as YAML text; the same rows give the same bytes, in any database."""
    return event_dump(event_data(workspace=workspace))


def workspace_for_operator(handle: str) -> Workspace | None:
    """The workspace an operator's `--workspace` names: its name or its slug."""
    wanted = (handle or "").strip()
    if not wanted:
        return None
    return (
        Workspace.objects.filter(name=wanted).first()
        or Workspace.objects.filter(slug=wanted).first()
    )
