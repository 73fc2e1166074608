"""Hints and prerequisites: players under /web/api/, creators under /console/api/."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.console import ConsoleApi
from challenges.inputs import HintInputSerializer
from challenges.models import Challenge, Hint
from challenges.selectors.challenges import challenges_for_creator, challenges_visible
from challenges.selectors.hints import (
    hint_body_shown,
    hint_visible_by_id,
    hints_for_creator,
    hints_for_player,
)
from challenges.selectors.levels import prerequisites_of
from challenges.services.hints import (
    hint_create,
    hint_delete,
    hint_unlock,
    hint_update,
)
from challenges.services.prerequisites import MAX_PREREQUISITES, challenge_set_prerequisites
from core.api import StrictSerializer, object_or_404, paginated_response, uuid_or_404
from core.errors import NotFoundError
from players.selectors import end_user_of_account, workspace_require_write

# --- Serializers ----------------------------------------------------------------------


class PlayerHintSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    order = serializers.IntegerField()
    cost = serializers.IntegerField(help_text="Points off your scoreboard total; 0 is free.")
    unlocked = serializers.SerializerMethodField(help_text="Free, or unlocked by you.")
    body_md = serializers.SerializerMethodField(help_text="Null until unlocked (free: always).")

    def get_unlocked(self, hint: Hint) -> bool:
        return hint_body_shown(hint)

    def get_body_md(self, hint: Hint) -> str | None:
        return hint.body_md if hint_body_shown(hint) else None


class HintOutputSerializer(serializers.ModelSerializer):
    challenge = serializers.UUIDField(source="challenge_id")
    unlocks = serializers.IntegerField(source="unlocks_count", help_text="Players who paid.")

    class Meta:
        model = Hint
        fields = ("id", "challenge", "order", "body_md", "cost", "unlocks", "created_at")


class PrerequisitesInputSerializer(StrictSerializer):
    prerequisite_ids = serializers.ListField(
        child=serializers.CharField(max_length=64), allow_empty=True, max_length=MAX_PREREQUISITES
    )


class PrerequisiteSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    slug = serializers.CharField()
    name = serializers.CharField()
    is_active = serializers.BooleanField(help_text="An inactive prerequisite is not required.")


class PrerequisitesOutputSerializer(serializers.Serializer):
    challenge_id = serializers.UUIDField()
    prerequisites = PrerequisiteSerializer(many=True)


# --- Web (players) ---------------------------------------------------------------------


class ChallengeHintListApi(APIView):
    @extend_schema(responses=PlayerHintSerializer(many=True))
    def get(self, request, challenge_id):
        challenge = object_or_404(challenges_visible(), challenge_id)
        end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
        hints = hints_for_player(challenge=challenge, end_user=end_user)
        return paginated_response(request, self, hints, PlayerHintSerializer)


class HintUnlockApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: PlayerHintSerializer, 201: PlayerHintSerializer})
    def post(self, request, hint_id):
        hint = hint_visible_by_id(hint_id=uuid_or_404(hint_id))
        if hint is None:
            raise NotFoundError()
        unlocked = hint_unlock(hint=hint, account=request.user)
        hint.unlocked = True
        return Response(
            PlayerHintSerializer(hint).data,
            status=status.HTTP_201_CREATED if unlocked.created else status.HTTP_200_OK,
        )


# --- Console (creators) ----------------------------------------------------------------


def _creator_challenge(request, challenge_id) -> Challenge:
    return object_or_404(challenges_for_creator(user=request.user), challenge_id)


def _creator_hint(request, hint_id) -> Hint:
    return object_or_404(hints_for_creator(user=request.user), hint_id)


class ConsoleChallengeHintsApi(ConsoleApi):
    @extend_schema(responses=HintOutputSerializer(many=True))
    def get(self, request, challenge_id):
        challenge = _creator_challenge(request, challenge_id)
        hints = hints_for_creator(user=request.user, challenge=challenge)
        return paginated_response(request, self, hints, HintOutputSerializer)

    @extend_schema(request=HintInputSerializer, responses={201: HintOutputSerializer})
    def post(self, request, challenge_id):
        challenge = _creator_challenge(request, challenge_id)
        workspace_require_write(user=request.user, workspace_id=challenge.workspace_id)
        data = HintInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        hint = hint_create(challenge=challenge, **data.validated_data)
        created = _creator_hint(request, hint.id)
        return Response(HintOutputSerializer(created).data, status=status.HTTP_201_CREATED)


class ConsoleHintDetailApi(ConsoleApi):
    @extend_schema(responses=HintOutputSerializer)
    def get(self, request, hint_id):
        return Response(HintOutputSerializer(_creator_hint(request, hint_id)).data)

    @extend_schema(request=HintInputSerializer, responses=HintOutputSerializer)
    def patch(self, request, hint_id):
        hint = _creator_hint(request, hint_id)
        workspace_require_write(user=request.user, workspace_id=hint.challenge.workspace_id)
        data = HintInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        hint_update(hint=hint, **data.validated_data)
        return Response(HintOutputSerializer(_creator_hint(request, hint.id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request, hint_id):
        hint = _creator_hint(request, hint_id)
        workspace_require_write(user=request.user, workspace_id=hint.challenge.workspace_id)
        hint_delete(hint=hint)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _prerequisites_body(challenge: Challenge) -> dict:
    return PrerequisitesOutputSerializer(
        {"challenge_id": challenge.id, "prerequisites": prerequisites_of(challenge=challenge)}
    ).data


class ConsoleChallengePrerequisitesApi(ConsoleApi):
    @extend_schema(responses=PrerequisitesOutputSerializer)
    def get(self, request, challenge_id):
        return Response(_prerequisites_body(_creator_challenge(request, challenge_id)))

    @extend_schema(request=PrerequisitesInputSerializer, responses=PrerequisitesOutputSerializer)
    def put(self, request, challenge_id):
        challenge = _creator_challenge(request, challenge_id)
        workspace_require_write(user=request.user, workspace_id=challenge.workspace_id)
        data = PrerequisitesInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        challenge_set_prerequisites(
            challenge=challenge, prerequisite_ids=data.validated_data["prerequisite_ids"]
        )
        return Response(_prerequisites_body(challenge))
