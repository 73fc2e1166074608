"""The team scoreboard of a workspace (issue 24): a challenge solved by any member counts
once for the team, at the earliest solve among its members, worth POINTS_PER_SOLVE as on
the site scoreboard (challenges.selectors.scoreboard). A hint any member unlocked costs the
team once, what it cost that member (the highest, if several paid). A team's solves and
unlocks are its current members': a player who leaves takes theirs along.

The freeze and the board visibility are the site scoreboard's (challenges/selectors/
standings.py): `view` says what the viewer is shown, and a frozen view counts only the
solves made by the freeze. Team standings are not split by bracket (a team may mix them).

What a team shows is its solve list (which challenge, when) and its members' public names;
no attempt, prompt, reply or per-player secret of a member is read here.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max, Min

from challenges.models import Challenge
from challenges.scoring import POINTS_PER_SOLVE
from challenges.selectors.scoreboard import hints_unlocked, scoreboard_workspaces
from challenges.selectors.standings import BoardView, solves_as_of
from players.models import Team, Workspace
from players.teams.selectors import teams_with_members


@dataclass(frozen=True)
class TeamSolve:
    challenge_name: str
    challenge_slug: str
    solved_at: datetime


@dataclass(frozen=True)
class TeamRow:
    rank: int
    team_id: str
    team: str
    members: list[str]
    solved: list[TeamSolve]
    last_solve_at: datetime | None
    hint_costs: int = 0

    @property
    def solves(self) -> int:
        return len(self.solved)

    @property
    def points(self) -> int:
        return self.solves * POINTS_PER_SOLVE - self.hint_costs


def team_scoreboard_workspace(*, workspace_slug: str) -> Workspace | None:
    """The workspace, when it has a scoreboard and teams on."""
    workspace = next((ws for ws in scoreboard_workspaces() if ws.slug == workspace_slug), None)
    if workspace is None or workspace.team_size_limit == 0:
        return None
    return workspace


def _first_solves(workspace: Workspace, view: BoardView | None) -> dict[str, dict[str, datetime]]:
    """{team id: {challenge id: earliest solve by a member}} in one query, counted on the
    public challenges the site scoreboard counts, as `view` shows them."""
    rows = (
        solves_as_of(view=view)
        .filter(
            challenge__workspace=workspace,
            challenge__is_active=True,
            end_user__team_member__isnull=False,
        )
        .values("end_user__team_member__team_id", "challenge_id")
        .annotate(solved_at=Min("first_succeeded_at"))
    )
    solves: dict[str, dict[str, datetime]] = defaultdict(dict)
    for row in rows:
        solves[str(row["end_user__team_member__team_id"])][str(row["challenge_id"])] = row[
            "solved_at"
        ]
    return solves


def _hint_costs(workspace: Workspace, view: BoardView | None) -> dict[str, int]:
    """{team id: points its members' unlocks cost}, each hint once per team, in one query."""
    per_hint = (
        hints_unlocked(view, end_user__team_member__team__workspace=workspace)
        .values("end_user__team_member__team_id", "hint_id")
        .annotate(cost=Max("cost"))
    )
    costs: dict[str, int] = defaultdict(int)
    for row in per_hint:
        costs[str(row["end_user__team_member__team_id"])] += row["cost"]
    return costs


def team_scoreboard(
    *, workspace: Workspace, limit: int, view: BoardView | None = None
) -> list[TeamRow]:
    """Every team of the workspace, most points first; ties go to the team that reached
    its score first, then to the older team. `view` None: live (creators)."""
    solves = _first_solves(workspace, view)
    hint_costs = _hint_costs(workspace, view)
    teams: list[Team] = list(teams_with_members(workspace=workspace))
    challenges = {
        str(pk): (name, slug)
        for pk, name, slug in Challenge.objects.filter(
            workspace=workspace, is_active=True
        ).values_list("id", "name", "slug")
    }

    def order(team: Team) -> tuple:
        solved = solves.get(str(team.pk), {})
        last = max(solved.values()) if solved else None
        points = len(solved) * POINTS_PER_SOLVE - hint_costs.get(str(team.pk), 0)
        return (-points, last is None, last or team.created_at, team.created_at, str(team.pk))

    rows = []
    for position, team in enumerate(sorted(teams, key=order)[:limit], start=1):
        solved = sorted(solves.get(str(team.pk), {}).items(), key=lambda item: item[1])
        rows.append(
            TeamRow(
                rank=position,
                team_id=str(team.pk),
                team=team.name,
                members=[member.end_user.public_name for member in team.members.all()],
                solved=[
                    TeamSolve(
                        challenge_name=challenges[challenge_id][0],
                        challenge_slug=challenges[challenge_id][1],
                        solved_at=moment,
                    )
                    for challenge_id, moment in solved
                ],
                last_solve_at=solved[-1][1] if solved else None,
                hint_costs=hint_costs.get(str(team.pk), 0),
            )
        )
    return rows
