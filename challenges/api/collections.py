"""Collection APIs: creators under /console/api/, players under /web/api/."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.console import WORKSPACE_FILTER, ConsoleApi, workspace_filter
from challenges.api.serializers import (
    PLAYER_SOURCE_HELP,
    PLAYERS_PARAMETER,
    PublicChallengeSerializer,
    bracket_field,
    frozen_at_field,
    players_field,
)
from challenges.inputs import CollectionInputSerializer
from challenges.models import ChallengeCollection
from challenges.selectors.collections import (
    collections_for_creator,
    collections_public,
    collections_public_with_challenges,
    leaderboard_for_collection,
)
from challenges.selectors.standings import board_filters, board_view
from challenges.services.collections import (
    COLLECTION_FIELDS,
    MAX_CHALLENGES_PER_COLLECTION,
    collection_create,
    collection_delete,
    collection_set_challenges,
    collection_update,
)
from core.api import StrictSerializer, leaderboard_limit, object_or_404, paginated_response
from core.errors import NotFoundError
from players.inputs import workspace_kept
from players.selectors import workspace_for_write, workspace_require_write

# --- Serializers ----------------------------------------------------------------------


class CollectionChallengesInputSerializer(StrictSerializer):
    challenge_ids = serializers.ListField(
        child=serializers.CharField(max_length=64),
        allow_empty=True,
        max_length=MAX_CHALLENGES_PER_COLLECTION,
    )


class CollectionChallengeSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="challenge.id")
    slug = serializers.CharField(source="challenge.slug")
    name = serializers.CharField(source="challenge.name")
    is_active = serializers.BooleanField(source="challenge.is_active")
    position = serializers.IntegerField()


class CollectionOutputSerializer(serializers.ModelSerializer):
    workspace = serializers.UUIDField(source="workspace_id")
    created_by = serializers.IntegerField(source="created_by_id", allow_null=True)
    challenges = CollectionChallengeSerializer(source="ordered_items", many=True)

    class Meta:
        model = ChallengeCollection
        fields = (
            "id",
            "workspace",
            *COLLECTION_FIELDS,
            "challenges",
            "created_by",
            "created_at",
            "updated_at",
        )


class PublicCollectionSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChallengeCollection
        fields = (
            "id",
            "slug",
            "name",
            "description",
            "instructions_md",
            "theme",
            "scoring_strategy",
            "in_order",
            "created_at",
        )


class PublicCollectionDetailSerializer(PublicCollectionSerializer):
    challenges = serializers.SerializerMethodField()

    class Meta(PublicCollectionSerializer.Meta):
        fields = (*PublicCollectionSerializer.Meta.fields, "challenges")

    @extend_schema_field(PublicChallengeSerializer(many=True))
    def get_challenges(self, collection: ChallengeCollection) -> list:
        ordered = [item.challenge for item in collection.ordered_items]
        return PublicChallengeSerializer(ordered, many=True).data


class CollectionStandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    source = serializers.CharField(help_text=PLAYER_SOURCE_HELP)
    end_user_id = serializers.CharField()
    solved = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)
    last_achieved_at = serializers.DateTimeField()


class CollectionLeaderboardSerializer(serializers.Serializer):
    collection_id = serializers.UUIDField()
    scoring_strategy = serializers.CharField()
    frozen_at = frozen_at_field()
    bracket = bracket_field()
    players = players_field()
    metric = serializers.CharField(
        help_text="What 'value' holds: points, total_elapsed_ms, total_tokens or average_rating."
    )
    challenge_count = serializers.IntegerField()
    limit = serializers.IntegerField()
    entries = CollectionStandingSerializer(many=True)


# --- Console (creators) ----------------------------------------------------------------


def _creator_collection(request, collection_id) -> ChallengeCollection:
    return object_or_404(collections_for_creator(user=request.user), collection_id)


class CollectionListCreateApi(ConsoleApi):
    @extend_schema(
        parameters=[
            OpenApiParameter("app_id", str),
            WORKSPACE_FILTER,
        ],
        responses=CollectionOutputSerializer(many=True),
    )
    def get(self, request):
        workspace = workspace_filter(request)
        found = collections_for_creator(
            user=request.user,
            app_id=request.query_params.get("app_id") or None,
            workspace_id=workspace.id if workspace else None,
        )
        return paginated_response(request, self, found, CollectionOutputSerializer)

    @extend_schema(request=CollectionInputSerializer, responses={201: CollectionOutputSerializer})
    def post(self, request):
        data = CollectionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        workspace = workspace_for_write(user=request.user, requested=fields.pop("workspace", None))
        collection = collection_create(workspace=workspace, user=request.user, **fields)
        created = _creator_collection(request, collection.id)
        return Response(CollectionOutputSerializer(created).data, status=status.HTTP_201_CREATED)


class CollectionDetailApi(ConsoleApi):
    @extend_schema(responses=CollectionOutputSerializer)
    def get(self, request, collection_id):
        collection = _creator_collection(request, collection_id)
        return Response(CollectionOutputSerializer(collection).data)

    @extend_schema(request=CollectionInputSerializer, responses=CollectionOutputSerializer)
    def patch(self, request, collection_id):
        collection = _creator_collection(request, collection_id)
        workspace_require_write(user=request.user, workspace_id=collection.workspace_id)
        data = CollectionInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        fields = workspace_kept(dict(data.validated_data), what="A collection")
        collection_update(collection=collection, **fields)
        return Response(CollectionOutputSerializer(collection).data)

    @extend_schema(responses={204: None})
    def delete(self, request, collection_id):
        collection = _creator_collection(request, collection_id)
        workspace_require_write(user=request.user, workspace_id=collection.workspace_id)
        collection_delete(collection=collection)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CollectionChallengesApi(ConsoleApi):
    @extend_schema(
        request=CollectionChallengesInputSerializer, responses=CollectionOutputSerializer
    )
    def put(self, request, collection_id):
        collection = _creator_collection(request, collection_id)
        workspace_require_write(user=request.user, workspace_id=collection.workspace_id)
        data = CollectionChallengesInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        collection_set_challenges(
            collection=collection, challenge_ids=data.validated_data["challenge_ids"]
        )
        updated = _creator_collection(request, collection.id)
        return Response(CollectionOutputSerializer(updated).data)


# --- Web (players) ---------------------------------------------------------------------


class PublicCollectionListApi(APIView):
    @extend_schema(responses=PublicCollectionSerializer(many=True))
    def get(self, request):
        return paginated_response(request, self, collections_public(), PublicCollectionSerializer)


class PublicCollectionDetailApi(APIView):
    @extend_schema(responses=PublicCollectionDetailSerializer)
    def get(self, request, collection_id):
        collection = object_or_404(collections_public_with_challenges(), collection_id)
        return Response(PublicCollectionDetailSerializer(collection).data)


class PublicCollectionLeaderboardApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("limit", int, description="1–100, default 10"),
            OpenApiParameter(
                "bracket", str, description="Only the players of this bracket (its slug)"
            ),
            PLAYERS_PARAMETER,
        ],
        responses=CollectionLeaderboardSerializer,
    )
    def get(self, request, collection_id):
        limit = leaderboard_limit(request)
        collection = object_or_404(collections_public().select_related("workspace"), collection_id)
        view = board_view(
            workspace=collection.workspace,
            viewer=request.user,
            **board_filters(request.query_params),
        )
        if not view.shown:
            raise NotFoundError()
        board = leaderboard_for_collection(collection=collection, limit=limit, view=view)
        return Response(CollectionLeaderboardSerializer(board).data)
