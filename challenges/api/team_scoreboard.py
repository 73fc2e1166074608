"""The team scoreboard as JSON under /web/api/ (public, as the page is)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.serializers import frozen_at_field
from challenges.scoring import POINTS_PER_SOLVE
from challenges.selectors.standings import board_view
from challenges.selectors.team_scoreboard import team_scoreboard, team_scoreboard_workspace
from core.api import leaderboard_limit
from core.errors import NotFoundError


class TeamSolveSerializer(serializers.Serializer):
    challenge = serializers.CharField(source="challenge_name")
    challenge_slug = serializers.CharField()
    solved_at = serializers.DateTimeField()


class TeamRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    team_id = serializers.UUIDField()
    team = serializers.CharField()
    members = serializers.ListField(child=serializers.CharField())
    points = serializers.IntegerField()
    solves = serializers.IntegerField()
    last_solve_at = serializers.DateTimeField(allow_null=True)
    solved = TeamSolveSerializer(many=True)


class TeamScoreboardSerializer(serializers.Serializer):
    workspace = serializers.CharField()
    frozen_at = frozen_at_field()
    points_per_solve = serializers.IntegerField()
    teams = TeamRowSerializer(many=True)


class TeamScoreboardApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("limit", int, description="1–100, default 10")],
        responses=TeamScoreboardSerializer,
    )
    def get(self, request, workspace_slug):
        limit = leaderboard_limit(request)
        workspace = team_scoreboard_workspace(workspace_slug=workspace_slug)
        view = board_view(workspace=workspace, viewer=request.user) if workspace else None
        if view is None or not view.shown:
            raise NotFoundError("No team scoreboard for this workspace.")
        board = {
            "workspace": workspace.slug,
            "frozen_at": view.cutoff,
            "points_per_solve": POINTS_PER_SOLVE,
            "teams": team_scoreboard(workspace=workspace, limit=limit, view=view),
        }
        return Response(TeamScoreboardSerializer(board).data)
