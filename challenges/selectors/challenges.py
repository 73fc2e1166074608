"""Which challenges a player or a creator can see."""

import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.urls import reverse

from challenges.models import Challenge
from core.api import valid_uuids
from notifications.subjects import EventSubject
from players.selectors import rows_for_creator


def challenge_by_id(*, challenge_id: Any) -> Challenge | None:
    return Challenge.objects.filter(id=challenge_id).first()


def challenge_in_workspace_by_ref(*, workspace_id: Any, ref: str) -> Challenge | None:
    """A workspace's challenge named by id or by slug (as the bridge names them)."""
    challenges = Challenge.objects.filter(workspace_id=workspace_id).select_related("workspace")
    try:
        return challenges.filter(id=uuid.UUID(ref)).first()
    except ValueError:
        return challenges.filter(slug=ref).first()


def challenge_visible_by_id(*, challenge_id: str) -> Challenge | None:
    """An active challenge by its id as text; None for a malformed or unknown id."""
    try:
        challenge_uuid = uuid.UUID(str(challenge_id))
    except ValueError:
        return None
    return challenges_visible().filter(id=challenge_uuid).first()


def challenges_public() -> QuerySet[Challenge]:
    # Waves: each challenge's window (Challenge.play_window) without a query per row.
    return (
        Challenge.objects.active()
        .select_related("workspace")
        .prefetch_related("waves")
        .order_by("-created_at", "id")
    )


def challenges_visible() -> QuerySet[Challenge]:
    """Challenges a player may open, including ones outside their play window."""
    return Challenge.objects.filter(is_active=True).select_related("workspace")


def challenge_visible_by_slug(*, slug: str) -> Challenge | None:
    return Challenge.objects.select_related("workspace").filter(slug=slug, is_active=True).first()


def challenges_to_play() -> QuerySet[Challenge]:
    """Every challenge with its workspace; whether it is open is the play service's call."""
    return Challenge.objects.select_related("workspace")


def challenges_for_creator(
    *, user: AbstractBaseUser, app_id: str | None = None, workspace_id: uuid.UUID | None = None
) -> QuerySet[Challenge]:
    challenges = rows_for_creator(
        Challenge.objects, user=user, workspace_id=workspace_id, app_id=app_id
    )
    return challenges.order_by("-created_at", "id")


def challenge_subjects(challenge_ids: list[str]) -> dict[str, EventSubject]:
    """Challenges named and linked for the events about them (notifications.subjects)."""
    rows = Challenge.objects.filter(id__in=valid_uuids(challenge_ids)).values_list(
        "id", "name", "slug"
    )
    return {
        str(challenge_id): EventSubject(name=name, path=reverse("challenge-page", args=[slug]))
        for challenge_id, name, slug in rows
    }


def challenge_path_id(*, reference: str) -> str:
    """A challenge named by id or slug (the MCP tools take either), as the web API's paths
    take it: its id. Anything else is returned as it is, for the API to answer 404."""
    try:
        return str(uuid.UUID(reference))
    except ValueError:
        pass
    found = challenges_to_play().filter(slug=reference).values_list("id", flat=True).first()
    return str(found) if found else reference
