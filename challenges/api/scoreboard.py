"""The site scoreboard as JSON and CSV: the public one under /web/api/ (frozen while the
event is, per bracket, only for whoever the workspace shows its boards to) and the
creators' live one under /console/api/, with a challenge's live board beside it."""

import csv
import io

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.console import WORKSPACE_FILTER, ConsoleApi
from challenges.api.serializers import (
    PLAYERS_PARAMETER,
    LeaderboardSerializer,
    bracket_field,
    frozen_at_field,
    players_field,
)
from challenges.board_render import board_body_for_limit
from challenges.exports import CSV_MEDIA_TYPE, CsvExportRenderer, csv_cell
from challenges.scoring import POINTS_PER_SOLVE
from challenges.selectors.challenges import challenges_for_creator
from challenges.selectors.scoreboard import ScoreboardRow, scoreboard_standings
from challenges.selectors.standings import BoardView, board_filters, board_view, board_view_live
from core.api import ErrorsAsJson, leaderboard_limit, object_or_404
from core.errors import ApplicationError, NotFoundError
from players.models import Workspace
from players.selectors import workspace_for_read, workspaces_for_user

CSV_COLUMNS = ("rank", "player", "end_user_id", "points", "solves", "last_solve_at")


class ScoreboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    end_user_id = serializers.CharField()
    points = serializers.IntegerField()
    solves = serializers.IntegerField()
    last_solve_at = serializers.DateTimeField()


class ScoreboardSerializer(serializers.Serializer):
    workspace = serializers.CharField(help_text="The workspace's slug")
    frozen_at = frozen_at_field()
    bracket = bracket_field()
    players = players_field()
    points_per_solve = serializers.IntegerField()
    limit = serializers.IntegerField()
    entries = ScoreboardRowSerializer(many=True)


BRACKET = OpenApiParameter("bracket", str, description="Only this bracket's players (its slug)")
FORMAT = OpenApiParameter(
    "format", str, enum=["json", "csv"], description="csv: every row, no limit"
)


def _csv_response(rows: list[ScoreboardRow], *, filename: str) -> HttpResponse:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                csv_cell(value)
                for value in (
                    row.rank,
                    row.player,
                    row.end_user_id,
                    row.points,
                    row.solves,
                    row.last_solve_at.isoformat(),
                )
            ]
        )
    response = HttpResponse(buffer.getvalue(), content_type=CSV_MEDIA_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response


class _ScoreboardApi(ErrorsAsJson, APIView):
    # `?format=csv` (or `Accept: text/csv`) answers the standings as a CSV file.
    renderer_classes = [JSONRenderer, CsvExportRenderer]

    def respond(self, request, *, workspace: Workspace, view: BoardView, filename: str):
        export = request.query_params.get("format") or request.accepted_renderer.format
        if export == "csv":
            rows = scoreboard_standings(workspace=workspace, limit=None, view=view)
            return _csv_response(rows, filename=filename)
        if export != "json":
            raise ApplicationError(
                "'format' must be json or csv.", fields={"format": ["json or csv"]}
            )
        limit = leaderboard_limit(request)
        rows = scoreboard_standings(workspace=workspace, limit=limit, view=view)
        board = {
            "workspace": workspace.slug,
            "frozen_at": view.cutoff,
            "bracket": view.bracket.slug if view.bracket else None,
            "players": view.players or "all",
            "points_per_solve": POINTS_PER_SOLVE,
            "limit": limit,
            "entries": rows,
        }
        return Response(ScoreboardSerializer(board).data)


class ScoreboardApi(_ScoreboardApi):
    @extend_schema(
        parameters=[OpenApiParameter("limit", int), BRACKET, PLAYERS_PARAMETER, FORMAT],
        responses=ScoreboardSerializer,
    )
    def get(self, request, workspace_slug):
        workspace = Workspace.objects.filter(slug=workspace_slug).first()
        if workspace is None:
            raise NotFoundError()
        view = board_view(
            workspace=workspace,
            viewer=request.user,
            **board_filters(request.query_params),
        )
        if not view.shown:
            raise NotFoundError()
        return self.respond(
            request, workspace=workspace, view=view, filename=f"scoreboard-{workspace.slug}"
        )


def _console_workspace(request) -> Workspace:
    requested = request.query_params.get("workspace")
    if requested:
        return workspace_for_read(user=request.user, requested=requested)
    workspaces = list(workspaces_for_user(user=request.user)[:2])
    if len(workspaces) != 1:
        raise ApplicationError(
            "Say which workspace with 'workspace' (id or slug).",
            fields={"workspace": ["Required unless you belong to exactly one workspace."]},
        )
    return workspaces[0]


class ConsoleScoreboardApi(ConsoleApi, _ScoreboardApi):
    @extend_schema(
        parameters=[
            WORKSPACE_FILTER,
            OpenApiParameter("limit", int),
            BRACKET,
            PLAYERS_PARAMETER,
            FORMAT,
        ],
        responses=ScoreboardSerializer,
    )
    def get(self, request):
        workspace = _console_workspace(request)
        view = board_view_live(workspace=workspace, **board_filters(request.query_params))
        return self.respond(
            request, workspace=workspace, view=view, filename=f"scoreboard-live-{workspace.slug}"
        )


class ConsoleChallengeLeaderboardApi(ConsoleApi):
    """A challenge's board as it stands now, freeze or not: for the creators."""

    @extend_schema(
        parameters=[OpenApiParameter("limit", int), BRACKET, PLAYERS_PARAMETER],
        responses=LeaderboardSerializer,
    )
    def get(self, request, challenge_id):
        challenge = object_or_404(
            challenges_for_creator(user=request.user).select_related("workspace"), challenge_id
        )
        view = board_view_live(workspace=challenge.workspace, **board_filters(request.query_params))
        body = board_body_for_limit(
            challenge=challenge, limit=leaderboard_limit(request), view=view
        )
        return HttpResponse(body, content_type="application/json")
