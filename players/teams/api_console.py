"""Creators' team API under /console/api/: teams of their workspaces, members removed,
the workspace's team size limit."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import object_or_404, paginated_response
from core.errors import ApplicationError
from players.models import Workspace
from players.selectors import (
    workspace_for_read,
    workspace_for_write,
    workspace_require_write,
    workspaces_for_user,
)
from players.teams.selectors import teams_for_creator
from players.teams.serializers import ConsoleTeamOutputSerializer, TeamSettingsSerializer
from players.teams.services import team_member_remove, team_size_limit_set

WORKSPACE_PARAMETER = OpenApiParameter(
    "workspace", str, description="Workspace id or slug; 404 if not yours"
)


class _ConsoleApi(APIView):
    permission_classes = [IsAuthenticated]


class TeamListApi(_ConsoleApi):
    @extend_schema(
        parameters=[WORKSPACE_PARAMETER], responses=ConsoleTeamOutputSerializer(many=True)
    )
    def get(self, request):
        requested = request.query_params.get("workspace")
        workspace = (
            workspace_for_read(user=request.user, requested=requested) if requested else None
        )
        teams = teams_for_creator(
            user=request.user, workspace_id=workspace.id if workspace else None
        )
        return paginated_response(request, self, teams, ConsoleTeamOutputSerializer)


class TeamDetailApi(_ConsoleApi):
    @extend_schema(responses=ConsoleTeamOutputSerializer)
    def get(self, request, team_id):
        team = object_or_404(teams_for_creator(user=request.user), team_id)
        return Response(ConsoleTeamOutputSerializer(team).data)


class TeamMemberApi(_ConsoleApi):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request, team_id, end_user_id):
        team = object_or_404(teams_for_creator(user=request.user), team_id)
        workspace_require_write(user=request.user, workspace_id=team.workspace_id)
        team_member_remove(team=team, end_user_id=end_user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _readable_workspace(request) -> Workspace:
    requested = request.query_params.get("workspace")
    if requested:
        return workspace_for_read(user=request.user, requested=requested)
    workspaces = list(workspaces_for_user(user=request.user)[:2])
    if len(workspaces) == 1:
        return workspaces[0]
    raise ApplicationError(
        "Say which workspace with ?workspace= (id or slug).",
        fields={"workspace": ["Required unless you belong to exactly one workspace."]},
    )


class TeamSettingsApi(_ConsoleApi):
    @extend_schema(parameters=[WORKSPACE_PARAMETER], responses=TeamSettingsSerializer)
    def get(self, request):
        return Response(TeamSettingsSerializer(_readable_workspace(request)).data)

    @extend_schema(
        parameters=[WORKSPACE_PARAMETER],
        request=TeamSettingsSerializer,
        responses=TeamSettingsSerializer,
    )
    def patch(self, request):
        requested = request.query_params.get("workspace")
        if requested:
            workspace = workspace_for_read(user=request.user, requested=requested)
            workspace_require_write(user=request.user, workspace_id=workspace.id)
        else:
            workspace = workspace_for_write(user=request.user, requested=None)
        data = TeamSettingsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = team_size_limit_set(
            workspace=workspace, team_size_limit=data.validated_data["team_size_limit"]
        )
        return Response(TeamSettingsSerializer(workspace).data)
