"""The team scoreboard page (/scoreboard/<workspace>/teams/)."""

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from challenges.scoring import POINTS_PER_SOLVE
from challenges.selectors.standings import board_view
from challenges.selectors.team_scoreboard import team_scoreboard, team_scoreboard_workspace
from players.teams.selectors import team_of_account

STANDINGS_LIMIT = 100


@require_GET
def team_scoreboard_page(request: HttpRequest, workspace_slug: str) -> HttpResponse:
    workspace = team_scoreboard_workspace(workspace_slug=workspace_slug)
    if workspace is None:
        raise Http404("No team scoreboard for this workspace.")
    # Teams are not split by bracket, so the view asks for none.
    view = board_view(workspace=workspace, viewer=request.user)
    own = team_of_account(account=request.user, workspace=workspace)
    return render(
        request,
        "challenges/team_scoreboard.html",
        {
            "workspace": workspace,
            "board": view,
            "frozen_at": view.cutoff,
            "rows": (
                team_scoreboard(workspace=workspace, limit=STANDINGS_LIMIT, view=view)
                if view.shown
                else []
            ),
            "own_team_id": str(own.pk) if own else "",
            "points_per_solve": POINTS_PER_SOLVE,
        },
        # As the site scoreboard answers a board its workspace does not show this viewer.
        status=200 if view.shown else 404,
    )
