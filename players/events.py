"""Writes of a workspace's event settings: its play window, the scoreboard freeze, who
sees its boards, and its brackets (docs/events.md). Boards redraw when a workspace is saved
(challenges/receivers.py), so these only write rows."""

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from core.errors import ApplicationError, fields_invalid
from players.models import Bracket, EndUser, Workspace

# "Not given" for fields where None means "clear it".
UNSET: Any = object()
BRACKETS_PER_WORKSPACE = 20


def event_settings_check(
    *, starts_at: datetime | None, ends_at: datetime | None, freeze_at: datetime | None
) -> dict[str, list[str]]:
    """The reasons a set of event times is refused, by field (empty: fine). The admin form
    and the console API both ask this."""
    errors: dict[str, list[str]] = {}
    if starts_at and ends_at and ends_at <= starts_at:
        errors["ends_at"] = ["The end must come after the start."]
    if freeze_at and ends_at and freeze_at >= ends_at:
        errors["freeze_at"] = ["A freeze must begin before the end (the end lifts it)."]
    if freeze_at and starts_at and freeze_at < starts_at:
        errors["freeze_at"] = ["A freeze cannot begin before the start."]
    return errors


@transaction.atomic
def workspace_event_update(
    *,
    workspace: Workspace,
    starts_at: datetime | None = UNSET,
    ends_at: datetime | None = UNSET,
    freeze_at: datetime | None = UNSET,
    board_visibility: str | None = None,
    freeze_lifted: bool | None = None,
    budget: dict | None = UNSET,
) -> Workspace:
    """Change what was given (None clears a time). A new freeze time starts a new freeze:
    a lift by hand only lifts the freeze it was made for. `freeze_lifted=True` lifts the
    freeze now, False puts it back."""
    locked = Workspace.objects.select_for_update().get(pk=workspace.pk)
    previous_freeze = locked.freeze_at
    changes = {"starts_at": starts_at, "ends_at": ends_at, "freeze_at": freeze_at}
    for field, value in changes.items():
        if value is not UNSET:
            setattr(locked, field, value)
    errors = event_settings_check(
        starts_at=locked.starts_at, ends_at=locked.ends_at, freeze_at=locked.freeze_at
    )
    if board_visibility is not None and board_visibility not in Workspace.BoardVisibility.values:
        errors["board_visibility"] = ["One of: " + ", ".join(Workspace.BoardVisibility.values)]
    if freeze_lifted is not None and locked.freeze_at is None:
        errors["freeze_lifted"] = ["There is no freeze to lift; set freeze_at first."]
    if errors:
        raise fields_invalid(errors)
    if locked.freeze_at != previous_freeze:
        locked.freeze_lifted_at = None
    if freeze_lifted is True and locked.freeze_lifted_at is None:
        locked.freeze_lifted_at = timezone.now()
    elif freeze_lifted is False:
        locked.freeze_lifted_at = None
    if board_visibility is not None:
        locked.board_visibility = board_visibility
    if budget is not UNSET:
        # The save bumps updated_at: the bridge lane's cached view of budgets goes stale.
        locked.budget_tokens = (budget or {}).get("tokens")
        locked.budget_cost = (budget or {}).get("cost")
    locked.save()
    return locked


def workspace_freeze_lift(*, workspace: Workspace) -> Workspace:
    return workspace_event_update(workspace=workspace, freeze_lifted=True)


def _bracket_name(name: str) -> str:
    name = " ".join(str(name).split())
    if not name or len(name) > Bracket._meta.get_field("name").max_length:
        raise ApplicationError(
            "A bracket's name is 1 to 60 characters.", fields={"name": ["1 to 60 characters."]}
        )
    return name


def bracket_create(*, workspace: Workspace, name: str, slug: str = "") -> Bracket:
    name = _bracket_name(name)
    slug = slugify(slug or name)[:60]
    if not slug:
        raise ApplicationError(
            "Give the bracket a name with letters or digits.", fields={"slug": ["Required."]}
        )
    if Bracket.objects.filter(workspace=workspace).count() >= BRACKETS_PER_WORKSPACE:
        raise ApplicationError(
            f"A workspace has at most {BRACKETS_PER_WORKSPACE} brackets.", code="too_many"
        )
    try:
        with transaction.atomic():
            return Bracket.objects.create(
                workspace=workspace,
                name=name,
                slug=slug,
                position=Bracket.objects.filter(workspace=workspace).count(),
            )
    except IntegrityError:
        raise ApplicationError(
            "This workspace already has a bracket with that slug.",
            code="conflict",
            status=409,
            fields={"slug": ["Taken in this workspace."]},
        ) from None


def bracket_delete(*, bracket: Bracket) -> None:
    """Its players keep playing, in no bracket."""
    bracket.delete()


def end_user_bracket_set(*, end_user: EndUser, bracket: Bracket | None) -> EndUser:
    """A creator puts a player in a bracket of the player's workspace (or in none)."""
    if bracket is not None and bracket.workspace_id != end_user.workspace_id:
        raise ApplicationError(
            "That bracket belongs to another workspace.",
            fields={"bracket": ["Not a bracket of the player's workspace."]},
        )
    end_user.bracket = bracket
    end_user.save(update_fields=["bracket"])
    return end_user


@transaction.atomic
def player_bracket_choose(*, end_user: EndUser, bracket: Bracket) -> EndUser:
    """A player picks their bracket in a workspace, once; afterwards only a creator moves
    them (so nobody hops to whichever bracket they lead)."""
    locked = EndUser.objects.select_for_update().get(pk=end_user.pk)
    if bracket.workspace_id != locked.workspace_id:
        raise ApplicationError(
            "That bracket belongs to another workspace.",
            fields={"bracket": ["Not a bracket of this workspace."]},
        )
    if locked.bracket_id is not None and locked.bracket_id != bracket.id:
        raise ApplicationError(
            "You have picked your bracket already; ask the organisers to move you.",
            code="bracket_chosen",
            status=409,
        )
    return end_user_bracket_set(end_user=locked, bracket=bracket)
