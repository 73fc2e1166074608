"""Who sees which standings of an event: the one rule every board asks (docs/events.md).

`board_view` decides, for a workspace and a viewer, whether its boards are shown at all
(the workspace's `board_visibility`), as of which moment (the freeze), for which bracket and
for whom (`?players=agents`: wins made with an agent's token; `humans`: every other win).
Challenge boards, collection boards, the scoreboard, their pages, APIs, CSV, the board
cache, the lane and the live frames all take their rows through `standing_entries`
(or `solves_as_of` for the scoreboard's solve counts), so a frozen board is the same on
every channel. Creators see live standings in the admin and the console (`board_view_live`).

While frozen, each player's row is their best successful attempt made by the freeze: the
board entry itself when it has not improved since (almost always), else the attempt picked
by the same order the entry keeps (`rank_value`, then the earlier attempt). The agents' and
the humans' boards pick the same way among that side's wins: a player who won both ways
stands on both, each with their best win of that side.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Case, Exists, F, OuterRef, Q, QuerySet, Subquery, UUIDField, When

from challenges.models import ChallengeAttempt, LeaderboardEntry
from core.errors import ApplicationError, NotFoundError
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
    # "agents", "humans" or "" (everyone): whose wins the board ranks (PLAYERS).
    players: str = ""
    # The board is the same whoever asks (a public workspace's boards, on the public
    # channels): an answer of it may be kept by shared caches; any other depends on who
    # asks (players-only or hidden boards, a creator's live view) and is private.
    same_for_everyone: bool = False

    @property
    def filtered(self) -> bool:
        """Whether this is one part of the board (a bracket, agents or humans): such pages
        are read on load and polled; the live frames carry the whole board."""
        return self.bracket is not None or bool(self.players)


AGENTS = "agents"
HUMANS = "humans"
PLAYERS = (AGENTS, HUMANS)


def board_filters(params: Any, *, page: bool = False) -> dict[str, str]:
    """The board filters of a request's query (`?bracket=`, `?players=`) as `board_view`
    takes them: every board's page and API reads them here. A page shows the whole board
    for a `players` it does not know (an API answers 400)."""
    players = params.get("players", "")
    if page and players not in PLAYERS:
        players = ""
    return {"bracket_slug": params.get("bracket", ""), "players": players}


def _players(value: str) -> str:
    if value in ("", "all"):
        return ""
    if value not in PLAYERS:
        message = "'players' must be agents, humans or all."
        raise ApplicationError(message, fields={"players": ["agents, humans or all"]})
    return value


def won_by(players: str, prefix: str = "") -> Q:
    """The attempts (`prefix`: the rows whose attempt, e.g. "attempt__") a board of
    `players` ranks: an agent token's for "agents", every other for "humans"."""
    by_agent = Q(**{f"{prefix}source": ChallengeAttempt.Source.AGENT})
    if players == AGENTS:
        return by_agent
    if players == HUMANS:
        return ~by_agent
    return Q()


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
    players: str = "",
    now: datetime | None = None,
) -> BoardView:
    """What `viewer` (None or anonymous: the public) sees of the workspace's boards on the
    public channels (pages, web API, CSV, live sockets). The freeze holds for everyone
    there; creators read live standings in the admin and the console. An unknown
    `bracket_slug` is a 404, an unknown `players` a 400."""
    players = _players(players)
    # Public boards ask nothing about the viewer: no query on the hot pages.
    public = workspace.board_visibility == Workspace.BoardVisibility.PUBLIC
    shown = public or (
        workspace.board_visibility in board_audiences(workspace=workspace, viewer=viewer)
    )
    return BoardView(
        workspace_id=workspace.id,
        shown=shown,
        cutoff=workspace.board_cutoff(now),
        bracket=_bracket(workspace, bracket_slug) if shown else None,
        players=players,
        same_for_everyone=public,
    )


def board_view_public(
    *, workspace: Workspace, players: str = "", now: datetime | None = None
) -> BoardView:
    """What anyone may see: the board the cache stores, the lane serves and frames carry."""
    return board_view(workspace=workspace, viewer=None, players=players, now=now)


def board_view_live(
    *, workspace: Workspace, bracket_slug: str = "", players: str = ""
) -> BoardView:
    """A creator's view in the admin and the console: live, whatever the freeze."""
    return BoardView(
        workspace_id=workspace.id,
        shown=True,
        cutoff=None,
        bracket=_bracket(workspace, bracket_slug),
        players=_players(players),
    )


def standing_entries(*, view: BoardView | None, challenge_ids: Any) -> QuerySet:
    """Each player's best successful attempt on each of `challenge_ids` (a list, or a
    values() query of ids), as `view` shows it (None: live, every bracket, everyone). Rows
    have LeaderboardEntry's names: challenge, end_user, rank_value, achieved_at, score,
    judge_rating, tokens_total, elapsed_ms, attempt_id; order them by ("rank_value",
    "achieved_at", "id") as a board does."""
    entries = LeaderboardEntry.objects.filter(challenge_id__in=challenge_ids)
    if view is not None and view.bracket is not None:
        entries = entries.filter(end_user__bracket=view.bracket)
    cutoff = view.cutoff if view is not None else None
    players = view.players if view is not None else ""
    if cutoff is None and not players:
        return entries
    # The entry's own attempt when it is one the view shows (almost always), else the
    # player's best attempt the view shows, in the entry's order.
    best_shown = ChallengeAttempt.objects.filter(
        won_by(players),
        challenge_id=OuterRef("challenge_id"),
        end_user_id=OuterRef("end_user_id"),
        succeeded=True,
    )
    entry_shown = won_by(players, prefix="attempt__")
    if cutoff is not None:
        best_shown = best_shown.filter(created_at__lte=cutoff)
        entry_shown &= Q(achieved_at__lte=cutoff)
        entries = entries.filter(first_succeeded_at__lte=cutoff)
    best_ids = entries.annotate(
        best=Case(
            When(entry_shown, then=F("attempt_id")),
            default=Subquery(
                best_shown.order_by("rank_value", "created_at", "id").values("id")[:1]
            ),
            output_field=UUIDField(),
        )
    ).values("best")
    return ChallengeAttempt.objects.filter(id__in=best_ids).annotate(
        achieved_at=F("created_at"), attempt_id=F("id")
    )


def standing_attempt_field(entries: QuerySet, field: str) -> str:
    """The lookup of the row's attempt's own `field` in `standing_entries` rows: they are
    board entries when live and the attempts themselves when frozen."""
    return field if entries.model is ChallengeAttempt else f"attempt__{field}"


def solves_as_of(*, view: BoardView | None) -> QuerySet[LeaderboardEntry]:
    """One row per (challenge, player) solved as `view` shows it; `first_succeeded_at` is
    when the solve happened, which a later improvement never moves. On the agents' or the
    humans' view a solve counts when that side won it (by the freeze, if frozen); its time
    is still the player's first win there, either side's."""
    entries = LeaderboardEntry.objects.all()
    if view is None:
        return entries
    if view.bracket is not None:
        entries = entries.filter(end_user__bracket=view.bracket)
    if view.cutoff is not None:
        entries = entries.filter(first_succeeded_at__lte=view.cutoff)
    if view.players:
        wins = ChallengeAttempt.objects.filter(
            won_by(view.players),
            challenge_id=OuterRef("challenge_id"),
            end_user_id=OuterRef("end_user_id"),
            succeeded=True,
        )
        if view.cutoff is not None:
            wins = wins.filter(created_at__lte=view.cutoff)
        entries = entries.filter(Exists(wins))
    return entries
