"""Players' team API under /web/api/ (session or bearer token)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import Pagination, StrictSerializer
from players.teams.selectors import team_by_id, teams_of_account, workspace_for_teams
from players.teams.serializers import TeamOutputSerializer, team_data
from players.teams.services import (
    team_create,
    team_invite_code_regenerate,
    team_join,
    team_leave,
    team_member_remove_by_captain,
)


class _PlayerApi(APIView):
    permission_classes = [IsAuthenticated]


def _team_response(request, team_id, *, status_code: int = status.HTTP_200_OK) -> Response:
    # Read again with its members: the answer shows the team as it now is.
    return Response(
        team_data(team_by_id(team_id=team_id), viewer=request.user),
        status=status_code,
        headers={"Cache-Control": "no-store"},
    )


class TeamCreateApi(_PlayerApi):
    class TeamCreateInputSerializer(StrictSerializer):
        workspace = serializers.CharField(max_length=100, help_text="Workspace id or slug")
        name = serializers.CharField(max_length=200)

    @extend_schema(request=TeamCreateInputSerializer, responses={201: TeamOutputSerializer})
    def post(self, request):
        data = self.TeamCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_for_teams(requested=data.validated_data["workspace"])
        team = team_create(
            account=request.user, workspace=workspace, name=data.validated_data["name"]
        )
        return _team_response(request, team.pk, status_code=status.HTTP_201_CREATED)


class TeamJoinApi(_PlayerApi):
    class TeamJoinInputSerializer(StrictSerializer):
        invite_code = serializers.CharField(max_length=40)

    @extend_schema(request=TeamJoinInputSerializer, responses=TeamOutputSerializer)
    def post(self, request):
        data = self.TeamJoinInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        team = team_join(account=request.user, invite_code=data.validated_data["invite_code"])
        return _team_response(request, team.pk)


class TeamDetailApi(APIView):
    @extend_schema(responses=TeamOutputSerializer)
    def get(self, request, team_id):
        return _team_response(request, team_id)


class TeamLeaveApi(_PlayerApi):
    @extend_schema(request=None, responses={204: None})
    def post(self, request, team_id):
        team_leave(account=request.user, team_id=team_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TeamMemberApi(_PlayerApi):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request, team_id, end_user_id):
        team_member_remove_by_captain(
            account=request.user, team_id=team_id, end_user_id=end_user_id
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class TeamInviteCodeApi(_PlayerApi):
    @extend_schema(request=None, responses=TeamOutputSerializer)
    def post(self, request, team_id):
        team = team_invite_code_regenerate(account=request.user, team_id=team_id)
        return _team_response(request, team.pk)


class MeTeamsApi(_PlayerApi):
    @extend_schema(responses=TeamOutputSerializer(many=True))
    def get(self, request):
        paginator = Pagination()
        teams = paginator.paginate_queryset(teams_of_account(account=request.user), request)
        return paginator.get_paginated_response(
            [team_data(team, viewer=request.user) for team in teams]
        )
