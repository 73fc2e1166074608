"""The Team page (/teams/): per workspace, your team (members, invite code, leave, the
captain's tools) or the forms to create one and to join one with a code."""

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.errors import ApplicationError
from players.models import Team, Workspace
from players.teams.selectors import (
    team_captain,
    team_workspaces,
    teams_of_account,
    workspace_for_teams,
)
from players.teams.services import (
    team_create,
    team_invite_code_regenerate,
    team_join,
    team_leave,
    team_member_remove_by_captain,
)


@dataclass(frozen=True)
class WorkspaceTeam:
    workspace: Workspace
    team: Team | None
    is_captain: bool
    has_standings: bool  # the team standings exist and are public


@require_GET
def teams_page(request: HttpRequest) -> HttpResponse:
    mine: dict = {}
    if request.user.is_authenticated:
        mine = {team.workspace_id: team for team in teams_of_account(account=request.user)}
    with_standings = list(team_workspaces())
    # A team stays on the page after its workspace turned teams off, so it can be left.
    workspaces = with_standings + [
        team.workspace for team in mine.values() if team.workspace not in with_standings
    ]
    rows = []
    for workspace in workspaces:
        team = mine.get(workspace.pk)
        captain = team_captain(team) if team else None
        rows.append(
            WorkspaceTeam(
                workspace=workspace,
                team=team,
                is_captain=bool(captain and captain.end_user.account_id == request.user.pk),
                # Who sees a players-only or hidden board is the standings rule's to say
                # (challenges.selectors.standings); from here only public ones are linked,
                # and the site scoreboard links the others for those it shows them to.
                has_standings=workspace in with_standings
                and workspace.board_visibility == Workspace.BoardVisibility.PUBLIC,
            )
        )
    response = render(request, "players/teams.html", {"rows": rows})
    response["Cache-Control"] = "no-store"  # it shows invite codes
    return response


def _done(request: HttpRequest, action, success: str) -> HttpResponse:
    try:
        action()
    except ApplicationError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, success)
    return redirect("teams")


@login_required
@require_POST
def team_create_page(request: HttpRequest) -> HttpResponse:
    name = request.POST.get("name", "")[:200]

    def create() -> None:
        workspace = workspace_for_teams(requested=request.POST.get("workspace", "")[:100])
        team_create(account=request.user, workspace=workspace, name=name)

    return _done(request, create, "Your team is made: share its invite code with your teammates.")


@login_required
@require_POST
def team_join_page(request: HttpRequest) -> HttpResponse:
    code = request.POST.get("invite_code", "")[:40]
    return _done(
        request, lambda: team_join(account=request.user, invite_code=code), "You joined the team."
    )


@login_required
@require_POST
def team_leave_page(request: HttpRequest, team_id: str) -> HttpResponse:
    return _done(
        request, lambda: team_leave(account=request.user, team_id=team_id), "You left the team."
    )


@login_required
@require_POST
def team_member_remove_page(request: HttpRequest, team_id: str, end_user_id: str) -> HttpResponse:
    return _done(
        request,
        lambda: team_member_remove_by_captain(
            account=request.user, team_id=team_id, end_user_id=end_user_id
        ),
        "The player is no longer in your team.",
    )


@login_required
@require_POST
def team_invite_code_page(request: HttpRequest, team_id: str) -> HttpResponse:
    return _done(
        request,
        lambda: team_invite_code_regenerate(account=request.user, team_id=team_id),
        "Your team has a new invite code; the old one no longer works.",
    )
