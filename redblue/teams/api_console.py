"""Creators' API under /console/api/red-blue-challenges: rows of the caller's workspaces
only; another workspace's ids answer 404."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import object_or_404, paginated_response, uuid_or_404
from core.errors import ApplicationError
from players.inputs import workspace_kept
from players.selectors import workspace_for_write, workspace_require_write
from redblue.models import RedBlueChallenge, TeamPairing
from redblue.teams.selectors import (
    pairings_for_creator,
    red_blue_challenges_for_creator,
    regression_set_for_creator,
)
from redblue.teams.serializers import (
    PairingSerializer,
    RedBlueChallengeInputSerializer,
    RedBlueChallengeOutputSerializer,
    RegressionAttackSerializer,
)
from redblue.teams.services.challenges import (
    red_blue_challenge_create,
    red_blue_challenge_delete,
    red_blue_challenge_update,
)


class ConsoleApi(APIView):
    permission_classes = [IsAuthenticated]

    def challenge(self, request, challenge_id) -> RedBlueChallenge:
        return object_or_404(red_blue_challenges_for_creator(user=request.user), challenge_id)


class RedBlueChallengeListCreateApi(ConsoleApi):
    @extend_schema(
        operation_id="console_red_blue_challenges_list",
        parameters=[
            OpenApiParameter("app_id", str),
            OpenApiParameter("workspace", str, description="Workspace id"),
        ],
        responses=RedBlueChallengeOutputSerializer(many=True),
    )
    def get(self, request):
        workspace = request.query_params.get("workspace")
        challenges = red_blue_challenges_for_creator(
            user=request.user,
            app_id=request.query_params.get("app_id") or None,
            workspace_id=uuid_or_404(workspace) if workspace else None,
        )
        return paginated_response(request, self, challenges, RedBlueChallengeOutputSerializer)

    @extend_schema(
        operation_id="console_red_blue_challenges_create",
        request=RedBlueChallengeInputSerializer,
        responses={201: RedBlueChallengeOutputSerializer},
    )
    def post(self, request):
        data = RedBlueChallengeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        workspace = workspace_for_write(user=request.user, requested=fields.pop("workspace", None))
        challenge = red_blue_challenge_create(workspace=workspace, user=request.user, **fields)
        return Response(
            RedBlueChallengeOutputSerializer(challenge).data, status=status.HTTP_201_CREATED
        )


class RedBlueChallengeDetailApi(ConsoleApi):
    @extend_schema(
        operation_id="console_red_blue_challenge_retrieve",
        responses=RedBlueChallengeOutputSerializer,
    )
    def get(self, request, challenge_id):
        return Response(
            RedBlueChallengeOutputSerializer(self.challenge(request, challenge_id)).data
        )

    @extend_schema(
        operation_id="console_red_blue_challenge_update",
        request=RedBlueChallengeInputSerializer,
        responses=RedBlueChallengeOutputSerializer,
    )
    def patch(self, request, challenge_id):
        challenge = self.challenge(request, challenge_id)
        workspace_require_write(user=request.user, workspace_id=challenge.workspace_id)
        data = RedBlueChallengeInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        fields = workspace_kept(dict(data.validated_data), what="A challenge")
        challenge = red_blue_challenge_update(challenge=challenge, user=request.user, **fields)
        return Response(RedBlueChallengeOutputSerializer(challenge).data)

    @extend_schema(operation_id="console_red_blue_challenge_delete", responses={204: None})
    def delete(self, request, challenge_id):
        challenge = self.challenge(request, challenge_id)
        workspace_require_write(user=request.user, workspace_id=challenge.workspace_id)
        red_blue_challenge_delete(challenge=challenge)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RedBlueChallengePairingListApi(ConsoleApi):
    @extend_schema(
        operation_id="console_red_blue_challenge_pairings",
        parameters=[OpenApiParameter("status", str, enum=TeamPairing.Status.values)],
        responses=PairingSerializer(many=True),
    )
    def get(self, request, challenge_id):
        challenge = self.challenge(request, challenge_id)
        wanted = request.query_params.get("status") or None
        if wanted and wanted not in TeamPairing.Status.values:
            raise ApplicationError(
                "'status' must be pending, completed or failed.",
                fields={"status": ["pending, completed or failed"]},
            )
        pairings = pairings_for_creator(challenge=challenge, status=wanted)
        return paginated_response(request, self, pairings, PairingSerializer)


class RedBlueRegressionSetApi(ConsoleApi):
    """The attacks that broke a defence of the challenge; each later defence is run
    against them before it counts (docs/redblue.md, "Regression set")."""

    @extend_schema(
        operation_id="console_red_blue_challenge_regression_set",
        responses=RegressionAttackSerializer(many=True),
    )
    def get(self, request, challenge_id):
        challenge = self.challenge(request, challenge_id)
        rows = regression_set_for_creator(challenge=challenge)
        return paginated_response(request, self, rows, RegressionAttackSerializer)
