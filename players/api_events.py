"""An event's settings over the console API (creators) and a player's bracket over the web
API: `GET/PATCH /console/api/workspace`, `/console/api/brackets`, a player's bracket at
`PATCH /console/api/players/{id}`, and `GET/POST /web/api/me/brackets`."""

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import StrictSerializer, object_or_404, paginated_response
from core.errors import ApplicationError
from players.events import (
    UNSET,
    bracket_create,
    bracket_delete,
    end_user_bracket_set,
    player_bracket_choose,
    workspace_event_update,
)
from players.inputs import WORKSPACE, BudgetSerializer, budget_out
from players.models import Bracket, EndUser, Workspace
from players.selectors import (
    brackets_of_workspace,
    workspace_of_member,
    workspace_require_write,
    workspaces_for_user,
)
from players.services import end_user_for_account


class WorkspaceSettingsSerializer(serializers.ModelSerializer):
    budget = serializers.SerializerMethodField(help_text="{tokens, cost} or null")
    frozen = serializers.SerializerMethodField(
        help_text="Whether public standings are frozen right now"
    )
    brackets = serializers.SerializerMethodField()

    class Meta:
        model = Workspace
        fields = [
            "id",
            "name",
            "slug",
            "starts_at",
            "ends_at",
            "freeze_at",
            "freeze_lifted_at",
            "frozen",
            "board_visibility",
            "brackets",
            "budget",
        ]

    @extend_schema_field(BudgetSerializer(allow_null=True))
    def get_budget(self, workspace: Workspace) -> dict | None:
        return budget_out(workspace.budget_tokens, workspace.budget_cost)

    def get_frozen(self, workspace: Workspace) -> bool:
        return workspace.board_cutoff() is not None

    def get_brackets(self, workspace: Workspace) -> list[str]:
        return [bracket.slug for bracket in brackets_of_workspace(workspace_id=workspace.id)]


class WorkspaceSettingsInputSerializer(StrictSerializer):
    starts_at = serializers.DateTimeField(required=False, allow_null=True)
    ends_at = serializers.DateTimeField(required=False, allow_null=True)
    freeze_at = serializers.DateTimeField(required=False, allow_null=True)
    freeze_lifted = serializers.BooleanField(
        required=False, help_text="true lifts the freeze now; false puts it back"
    )
    board_visibility = serializers.ChoiceField(
        choices=Workspace.BoardVisibility.values, required=False
    )
    budget = BudgetSerializer(
        required=False, allow_null=True, help_text="The event's budget; null removes it"
    )


class BracketSerializer(serializers.ModelSerializer):
    players = serializers.SerializerMethodField()

    class Meta:
        model = Bracket
        fields = ["id", "name", "slug", "position", "players"]

    def get_players(self, bracket: Bracket) -> int:
        return bracket.end_users.count()


class BracketInputSerializer(StrictSerializer):
    name = serializers.CharField(max_length=60)
    slug = serializers.SlugField(max_length=60, required=False, allow_blank=True)


class PlayerBracketInputSerializer(StrictSerializer):
    bracket = serializers.CharField(allow_null=True, help_text="A bracket's slug, or null")


class PlayerBracketSerializer(serializers.Serializer):
    end_user_id = serializers.UUIDField(source="id")
    workspace = serializers.CharField(source="workspace.slug")
    bracket = serializers.CharField(source="bracket.slug", allow_null=True, default=None)


class MyBracketInputSerializer(StrictSerializer):
    workspace = serializers.CharField(help_text="The workspace's slug")
    bracket = serializers.CharField(help_text="The bracket's slug")


class ConsoleApi(APIView):
    permission_classes = [IsAuthenticated]


def console_workspace(request) -> Workspace:
    """The workspace named by `?workspace=` (404 unless a member), else the only one."""
    return workspace_of_member(user=request.user, requested=request.query_params.get("workspace"))


class WorkspaceSettingsApi(ConsoleApi):
    @extend_schema(parameters=[WORKSPACE], responses=WorkspaceSettingsSerializer)
    def get(self, request):
        return Response(WorkspaceSettingsSerializer(console_workspace(request)).data)

    @extend_schema(
        parameters=[WORKSPACE],
        request=WorkspaceSettingsInputSerializer,
        responses=WorkspaceSettingsSerializer,
    )
    def patch(self, request):
        workspace = console_workspace(request)
        workspace_require_write(user=request.user, workspace_id=workspace.id)
        data = WorkspaceSettingsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        updated = workspace_event_update(
            workspace=workspace,
            starts_at=fields.get("starts_at", UNSET),
            ends_at=fields.get("ends_at", UNSET),
            freeze_at=fields.get("freeze_at", UNSET),
            board_visibility=fields.get("board_visibility"),
            freeze_lifted=fields.get("freeze_lifted"),
            budget=fields.get("budget", UNSET),
        )
        return Response(WorkspaceSettingsSerializer(updated).data)


class BracketListCreateApi(ConsoleApi):
    @extend_schema(parameters=[WORKSPACE], responses=BracketSerializer(many=True))
    def get(self, request):
        workspace = console_workspace(request)
        brackets = Bracket.objects.filter(workspace=workspace).order_by("position", "name", "id")
        return paginated_response(request, self, brackets, BracketSerializer)

    @extend_schema(
        parameters=[WORKSPACE], request=BracketInputSerializer, responses={201: BracketSerializer}
    )
    def post(self, request):
        workspace = console_workspace(request)
        workspace_require_write(user=request.user, workspace_id=workspace.id)
        data = BracketInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        bracket = bracket_create(workspace=workspace, **data.validated_data)
        return Response(BracketSerializer(bracket).data, status=status.HTTP_201_CREATED)


class BracketDetailApi(ConsoleApi):
    @extend_schema(responses={204: None})
    def delete(self, request, bracket_id):
        bracket = object_or_404(
            Bracket.objects.filter(workspace__in=workspaces_for_user(user=request.user)),
            bracket_id,
        )
        workspace_require_write(user=request.user, workspace_id=bracket.workspace_id)
        bracket_delete(bracket=bracket)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PlayerBracketApi(ConsoleApi):
    @extend_schema(request=PlayerBracketInputSerializer, responses=PlayerBracketSerializer)
    def patch(self, request, end_user_id):
        end_user = object_or_404(
            EndUser.objects.filter(
                workspace__in=workspaces_for_user(user=request.user)
            ).select_related("workspace", "bracket"),
            end_user_id,
        )
        workspace_require_write(user=request.user, workspace_id=end_user.workspace_id)
        data = PlayerBracketInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        slug = data.validated_data["bracket"]
        bracket = None
        if slug:
            bracket = Bracket.objects.filter(workspace_id=end_user.workspace_id, slug=slug).first()
            if bracket is None:
                raise ApplicationError(
                    "The player's workspace has no such bracket.",
                    fields={"bracket": ["Unknown bracket."]},
                )
        end_user_bracket_set(end_user=end_user, bracket=bracket)
        return Response(PlayerBracketSerializer(end_user).data)


class MyBracketsApi(APIView):
    """The signed-in player's brackets, one per workspace they play in; choosing one
    joins that workspace (its players-only boards then show)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=PlayerBracketSerializer(many=True))
    def get(self, request):
        players = (
            EndUser.objects.filter(account=request.user)
            .select_related("workspace", "bracket")
            .order_by("workspace__name", "id")
        )
        return paginated_response(request, self, players, PlayerBracketSerializer)

    @extend_schema(request=MyBracketInputSerializer, responses=PlayerBracketSerializer)
    def post(self, request):
        data = MyBracketInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        bracket = (
            Bracket.objects.select_related("workspace")
            .filter(slug=data.validated_data["bracket"])
            .filter(workspace__slug=data.validated_data["workspace"])
            .first()
        )
        if bracket is None:
            raise ApplicationError(
                "That workspace has no such bracket.",
                fields={"bracket": ["Unknown bracket of that workspace."]},
            )
        end_user = end_user_for_account(workspace=bracket.workspace, account=request.user)
        chosen = player_bracket_choose(end_user=end_user, bracket=bracket)
        return Response(PlayerBracketSerializer(chosen).data)
