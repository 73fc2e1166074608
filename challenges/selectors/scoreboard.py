"""The site-wide scoreboard of a workspace and a player's page: standings, timeline, solves.

A solved challenge is worth POINTS_PER_SOLVE, as in a CTF with static scoring; a player's
score is the sum over the workspace's public challenges whose leaderboard holds them, less
what the hints they unlocked on those challenges cost (docs/hints.md), and ties go to
whoever got there first. Each read is one query on LeaderboardEntry, the hint costs a
correlated aggregate inside it; a frozen view counts only unlocks made by the freeze.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, F, IntegerField, Max, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from challenges.models import Challenge, HintUnlock
from challenges.scoring import POINTS_PER_SOLVE
from challenges.selectors.standings import (
    BoardView,
    board_view,
    solves_as_of,
    standing_entries,
)
from players.models import EndUser, Workspace

GRAPH_PLAYERS = 10


@dataclass(frozen=True)
class ScoreboardRow:
    rank: int
    end_user_id: str
    player: str
    points: int
    solves: int
    last_solve_at: datetime


@dataclass(frozen=True)
class ScoreTimeline:
    end_user_id: str
    player: str
    # (when, points won or lost): +POINTS_PER_SOLVE for a solve, -cost for a hint.
    steps: list[tuple[datetime, int]]


@dataclass(frozen=True)
class PlayerSolve:
    challenge_name: str
    challenge_slug: str
    solved_at: datetime
    tokens_total: int | None
    elapsed_ms: int | None
    judge_rating: int | None


@dataclass(frozen=True)
class PlayerPage:
    end_user_id: str
    player: str
    workspace: Workspace
    # Shown to others as of this moment (the freeze); None: every solve.
    frozen_at: datetime | None
    solves: list[PlayerSolve]
    hint_costs: int

    @property
    def points(self) -> int:
        return POINTS_PER_SOLVE * len(self.solves) - self.hint_costs


def _public_name(display_name: str, external_id: str) -> str:
    return EndUser(display_name=display_name, external_id=external_id).public_name


def _public_entries(workspace: Workspace, view: BoardView | None):
    return solves_as_of(view=view).filter(challenge__workspace=workspace, challenge__is_active=True)


def hints_unlocked(view: BoardView | None, **lookups: Any):
    """Unlocks that cost points on the scoreboard: hints of public challenges, made by the
    freeze when `view` is frozen."""
    unlocks = HintUnlock.objects.filter(hint__challenge__is_active=True, **lookups)
    if view is not None and view.cutoff is not None:
        unlocks = unlocks.filter(created_at__lte=view.cutoff)
    return unlocks


def scoreboard_workspaces() -> list[Workspace]:
    """Workspaces with at least one public challenge, by name."""
    return list(
        Workspace.objects.filter(Q(challenges__is_active=True)).distinct().order_by("name", "id")
    )


def scoreboard_standings(
    *, workspace: Workspace, limit: int | None, view: BoardView | None = None
) -> list[ScoreboardRow]:
    """The top `limit` players (None: all) as `view` shows them (None: live, every bracket;
    challenges/selectors/standings.py)."""
    spent = (
        hints_unlocked(view, end_user_id=OuterRef("end_user_id"))
        .order_by()
        .values("end_user_id")
        .annotate(total=Sum("cost"))
        .values("total")
    )
    rows = (
        _public_entries(workspace, view)
        .values("end_user_id", "end_user__display_name", "end_user__external_id")
        .annotate(
            solves=Count("id"),
            last_solve_at=Max("first_succeeded_at"),
            spent=Coalesce(Subquery(spent, output_field=IntegerField()), 0),
        )
        .annotate(points=F("solves") * POINTS_PER_SOLVE - F("spent"))
        .order_by("-points", "last_solve_at", "end_user_id")
    )
    if limit is not None:
        rows = rows[:limit]
    return [
        ScoreboardRow(
            rank=position,
            end_user_id=str(row["end_user_id"]),
            player=_public_name(row["end_user__display_name"], row["end_user__external_id"]),
            points=row["points"],
            solves=row["solves"],
            last_solve_at=row["last_solve_at"],
        )
        for position, row in enumerate(rows, start=1)
    ]


def scoreboard_timelines(
    *, workspace: Workspace, standings: list[ScoreboardRow], view: BoardView | None = None
) -> list[ScoreTimeline]:
    """When each of the top players solved each challenge or paid for a hint, in standing
    order (one query for both)."""
    leaders = standings[:GRAPH_PLAYERS]
    leader_ids = [row.end_user_id for row in leaders]
    steps: dict[str, list[tuple[datetime, int]]] = {row.end_user_id: [] for row in leaders}
    solves = (
        _public_entries(workspace, view)
        .filter(end_user_id__in=leader_ids)
        .order_by()
        .values_list("end_user_id", "first_succeeded_at", Value(POINTS_PER_SOLVE))
    )
    costs = (
        hints_unlocked(view, end_user_id__in=leader_ids)
        .order_by()
        .values_list("end_user_id", "created_at", Value(0) - F("cost"))
    )
    for end_user_id, moment, points in sorted(
        solves.union(costs, all=True), key=lambda step: (step[1], -step[2])
    ):
        steps[str(end_user_id)].append((moment, points))
    return [
        ScoreTimeline(end_user_id=row.end_user_id, player=row.player, steps=steps[row.end_user_id])
        for row in leaders
    ]


def scoreboard_challenge_ids(*, workspace: Workspace) -> list[str]:
    return [
        str(pk)
        for pk in Challenge.objects.filter(workspace=workspace, is_active=True)
        .order_by("created_at")
        .values_list("id", flat=True)
    ]


def player_page(*, end_user_id: Any, viewer: AbstractBaseUser | None = None) -> PlayerPage | None:
    """A player's solves on public challenges; None for an unknown or malformed id, or
    when `viewer` may not see the workspace's boards. The player themself sees every solve;
    anyone else sees them as the boards do (up to the freeze)."""
    try:
        end_user_uuid = uuid.UUID(str(end_user_id))
    except ValueError:
        return None
    end_user = EndUser.objects.select_related("workspace").filter(id=end_user_uuid).first()
    if end_user is None:
        return None
    own = (
        viewer is not None
        and viewer.is_authenticated
        and end_user.account_id is not None
        and end_user.account_id == viewer.pk
    )
    view = None
    if not own:
        view = board_view(workspace=end_user.workspace, viewer=viewer)
        if not view.shown:
            return None
    entries = list(
        solves_as_of(view=view)
        .filter(end_user=end_user, challenge__is_active=True)
        .select_related("challenge")
        .only(
            "challenge_id",
            "first_succeeded_at",
            "tokens_total",
            "elapsed_ms",
            "judge_rating",
            "challenge__name",
            "challenge__slug",
        )
        .order_by("first_succeeded_at")
    )
    # While frozen, the numbers are those of the best solve made by the freeze.
    measured = {
        entry.challenge_id: (entry.tokens_total, entry.elapsed_ms, entry.judge_rating)
        for entry in entries
    }
    if view is not None and view.cutoff is not None and entries:
        frozen = standing_entries(
            view=view, challenge_ids=[entry.challenge_id for entry in entries]
        ).filter(end_user=end_user)
        for challenge_id, *numbers in frozen.values_list(
            "challenge_id", "tokens_total", "elapsed_ms", "judge_rating"
        ):
            measured[challenge_id] = tuple(numbers)
    hint_costs = hints_unlocked(view, end_user=end_user).aggregate(total=Sum("cost"))["total"] or 0
    return PlayerPage(
        end_user_id=str(end_user.id),
        hint_costs=hint_costs,
        player=end_user.public_name,
        workspace=end_user.workspace,
        frozen_at=view.cutoff if view is not None else None,
        solves=[
            PlayerSolve(
                challenge_name=entry.challenge.name,
                challenge_slug=entry.challenge.slug,
                solved_at=entry.first_succeeded_at,
                tokens_total=measured[entry.challenge_id][0],
                elapsed_ms=measured[entry.challenge_id][1],
                judge_rating=measured[entry.challenge_id][2],
            )
            for entry in entries
        ],
    )
