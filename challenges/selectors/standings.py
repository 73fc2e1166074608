"""Who sees which standings of an event: the one rule every board asks (docs/events.md).

`board_view` decides, for a workspace and a viewer, whether its boards are shown at all
(the workspace's `board_visibility`), as of which moment (the freeze) and for which bracket.
Challenge boards, collection boards, the scoreboard, their pages, APIs, CSV, the board
cache, the lane and the live frames all take their rows through `standing_entries`
(or `solves_as_of` for the scoreboard's solve counts), so a frozen board is the same on
every channel. Creators see live standings in the admin and the console (`board_view_live`).

While frozen, each player's row is their best successful attempt made by the freeze: the
board entry itself when it has not improved since (almost always), else the attempt picked
by the same order the entry keeps (`rank_value`, then the earlier attempt).
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Case, F, OuterRef, QuerySet, Subquery, UUIDField, When

from challenges.models import ChallengeAttempt, LeaderboardEntry
from core.errors import NotFoundError
from players.models import Bracket, Workspace
from players.selectors import end_user_of_account, membership_role


@dataclass(frozen=True)
class BoardView:
    workspace_id: object
    # Whether this viewer may see the workspace's boards at all.
    shown: bool
    # Standings are shown as of this moment (the freeze); None: live.
    cutoff: datetime | None
    bracket: Bracket | None = None


def _bracket(workspace: Workspace, bracket_slug: str) -> Bracket | None:
    if not bracket_slug:
        return None
    bracket = Bracket.objects.filter(workspace=workspace, slug=bracket_slug).first()
    if bracket is None:
        raise NotFoundError("This workspace has no such bracket.")
    return bracket


def board_audiences(*, workspace: Workspace, viewer: AbstractBaseUser | None) -> set[str]:
    """The board visibilities (Workspace.BoardVisibility) under which `viewer` is shown the
    workspace's boards: a creator every one, a player of the workspace (an account that
    has played or chosen a bracket there) "players" too, anyone "public"."""
    audiences = {Workspace.BoardVisibility.PUBLIC.value}
    if viewer is None or not viewer.is_authenticated:
        return audiences
    if membership_role(user=viewer, workspace_id=workspace.id) is not None:
        return {choice.value for choice in Workspace.BoardVisibility}
    if end_user_of_account(workspace_id=workspace.id, account=viewer) is not None:
        audiences.add(Workspace.BoardVisibility.PLAYERS.value)
    return audiences


def board_view(
    *,
    workspace: Workspace,
    viewer: AbstractBaseUser | None,
    bracket_slug: str = "",
    now: datetime | None = None,
) -> BoardView:
    """What `viewer` (None or anonymous: the public) sees of the workspace's boards on the
    public channels (pages, web API, CSV, live sockets). The freeze holds for everyone
    there; creators read live standings in the admin and the console. An unknown
    `bracket_slug` is a 404."""
    # Public boards ask nothing about the viewer: no query on the hot pages.
    shown = workspace.board_visibility == Workspace.BoardVisibility.PUBLIC or (
        workspace.board_visibility in board_audiences(workspace=workspace, viewer=viewer)
    )
    return BoardView(
        workspace_id=workspace.id,
        shown=shown,
        cutoff=workspace.board_cutoff(now),
        bracket=_bracket(workspace, bracket_slug) if shown else None,
    )


def board_view_public(*, workspace: Workspace, now: datetime | None = None) -> BoardView:
    """What anyone may see: the board the cache stores, the lane serves and frames carry."""
    return board_view(workspace=workspace, viewer=None, now=now)


def board_view_live(*, workspace: Workspace, bracket_slug: str = "") -> BoardView:
    """A creator's view in the admin and the console: live, whatever the freeze."""
    return BoardView(
        workspace_id=workspace.id,
        shown=True,
        cutoff=None,
        bracket=_bracket(workspace, bracket_slug),
    )


def standing_entries(*, view: BoardView | None, challenge_ids: Any) -> QuerySet:
    """Each player's best successful attempt on each of `challenge_ids` (a list, or a
    values() query of ids), as `view` shows it (None: live, every bracket). Rows have
    LeaderboardEntry's names: challenge, end_user, rank_value, achieved_at, score,
    judge_rating, tokens_total, elapsed_ms, attempt_id; order them by ("rank_value",
    "achieved_at", "id") as a board does."""
    entries = LeaderboardEntry.objects.filter(challenge_id__in=challenge_ids)
    if view is not None and view.bracket is not None:
        entries = entries.filter(end_user__bracket=view.bracket)
    if view is None or view.cutoff is None:
        return entries
    cutoff = view.cutoff
    best_before = (
        ChallengeAttempt.objects.filter(
            challenge_id=OuterRef("challenge_id"),
            end_user_id=OuterRef("end_user_id"),
            succeeded=True,
            created_at__lte=cutoff,
        )
        .order_by("rank_value", "created_at", "id")
        .values("id")[:1]
    )
    best_ids = (
        entries.filter(first_succeeded_at__lte=cutoff)
        .annotate(
            best=Case(
                # An entry not improved since the freeze is the best made by it.
                When(achieved_at__lte=cutoff, then=F("attempt_id")),
                default=Subquery(best_before),
                output_field=UUIDField(),
            )
        )
        .values("best")
    )
    return ChallengeAttempt.objects.filter(id__in=best_ids).annotate(
        achieved_at=F("created_at"), attempt_id=F("id")
    )


def standing_attempt_field(entries: QuerySet, field: str) -> str:
    """The lookup of the row's attempt's own `field` in `standing_entries` rows: they are
    board entries when live and the attempts themselves when frozen."""
    return field if entries.model is ChallengeAttempt else f"attempt__{field}"


def solves_as_of(*, view: BoardView | None) -> QuerySet[LeaderboardEntry]:
    """One row per (challenge, player) solved as `view` shows it; `first_succeeded_at` is
    when the solve happened, which a later improvement never moves."""
    entries = LeaderboardEntry.objects.all()
    if view is None:
        return entries
    if view.bracket is not None:
        entries = entries.filter(end_user__bracket=view.bracket)
    if view.cutoff is not None:
        entries = entries.filter(first_succeeded_at__lte=view.cutoff)
    return entries
