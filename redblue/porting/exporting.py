"""A workspace's challenges as an event file: every creator-set field, references by slug,
secrets by name, no ids and no timestamps of ours, in one stable order."""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from challenges.models import (
    Challenge,
    ChallengeCollection,
    ChallengePrerequisite,
    CollectionItem,
    Hint,
    Secret,
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
)
from redblue.teams.services import RED_BLUE_FIELDS


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
    names = [row.name for row in red_blue_rows]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        # A file names a red/blue challenge by its name; two alike could not be told apart.
        raise ApplicationError(
            "Two red/blue challenges of this workspace share a name: "
            + ", ".join(repeated)
            + ". Rename one (a file refers to them by name), then export again.",
            code="conflict",
            status=409,
        )
    red_blue_fields = _ordered_fields(RED_BLUE_FIELDS, RED_BLUE_KEY)
    red_blue = [_entry(row, red_blue_fields) for row in red_blue_rows]

    secrets = sorted(Secret.objects.filter(workspace=workspace).values_list("name", flat=True))
    return {
        "version": FORMAT_VERSION,
        "secrets": secrets,
        "challenges": challenges,
        "collections": collections,
        "red_blue_challenges": red_blue,
    }


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
