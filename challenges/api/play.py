"""The attempts endpoint: players send a prompt to a challenge's target model."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from challenges.models import PROMPT_MAX_CHARS, AttemptOwnText, ChallengeAttempt
from challenges.modes import play_mode_for
from challenges.selectors.attempts import attempts_of_player_queryset
from challenges.selectors.challenges import challenges_to_play
from challenges.services.play import ANSWER_MAX_CHARS, attempt_guess_async
from core.api import MoneyField, StrictSerializer, object_or_404, paginated_response
from core.async_api import AsyncApiView
from core.ratelimit import client_ip
from core.threads import run_orm
from players.selectors import end_user_of_account

VERDICT_STATUSES = ["passed", "failed", "under_review"]


def attempt_source(request, *, by_session: str = ChallengeAttempt.Source.API) -> str:
    """Who made a play, as the attempt records it: `by_session` for a signed-in browser, "api"
    for a token, "agent" for an agent's token (SPEC §9 Agents: it ranks on ?players=agents)."""
    if request.auth is None:
        return by_session
    if getattr(request.auth, "agent", False):
        return ChallengeAttempt.Source.AGENT
    return ChallengeAttempt.Source.API


PROOF_ID_HELP = "A win's signed proof: GET /web/api/proofs/{proof_id}. Null otherwise."


class AttemptCreateApi(AsyncApiView):
    permission_classes = [IsAuthenticated]

    class InputSerializer(StrictSerializer):
        prompt = serializers.CharField(
            min_length=1, max_length=PROMPT_MAX_CHARS, trim_whitespace=False
        )
        codename = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=100,
            help_text="Several targets with target_assignment 'choice': the model to attack.",
        )

    class OutputSerializer(serializers.Serializer):
        attempt_id = serializers.UUIDField()
        response = serializers.CharField()
        challenge_succeeded = serializers.BooleanField(
            allow_null=True, help_text="Null while the attempt is under review."
        )
        verdict_status = serializers.ChoiceField(VERDICT_STATUSES)
        judge_rating = serializers.IntegerField(allow_null=True)
        judge_feedback = serializers.CharField(allow_blank=True)
        score = serializers.FloatField(allow_null=True)
        leaderboard_rank = serializers.IntegerField(allow_null=True)
        proof_id = serializers.UUIDField(allow_null=True, help_text=PROOF_ID_HELP)
        tokens_total = serializers.IntegerField(source="attempt.tokens_total", allow_null=True)
        cost = MoneyField(
            source="attempt.cost",
            help_text="At the workspace's price of the model; null when it has none",
        )
        judge_tokens = serializers.IntegerField(
            source="attempt.judge_tokens",
            allow_null=True,
            help_text="What the LLM judges used (each judge's is in the console's `judges`)",
        )
        judge_cost = MoneyField(
            source="attempt.judge_cost",
            help_text="The judges' cost at the workspace's prices of their provider/model",
        )
        codename = serializers.CharField(
            required=False,
            help_text="Several targets: the codename of the one played (absent otherwise).",
        )

        def to_representation(self, instance):
            data = super().to_representation(instance)
            if not data.get("codename"):
                data.pop("codename", None)
            return data

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    async def post(self, request, challenge_id):
        challenge = await run_orm(object_or_404, challenges_to_play(), challenge_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = await play_mode_for(challenge).attempt_async(
            challenge=challenge,
            account=request.user,
            prompt=serializer.validated_data["prompt"],
            ip=client_ip(request),
            source=attempt_source(request),
            codename=serializer.validated_data.get("codename", ""),
        )
        return Response(self.OutputSerializer(result).data, status=status.HTTP_201_CREATED)

    class HistorySerializer(serializers.ModelSerializer):
        # The player's own masked copy where the attempt row keeps no text (a failed
        # attempt, a guess): theirs to read, never a creator's.
        prompt = serializers.SerializerMethodField()
        response = serializers.SerializerMethodField()
        proof_id = serializers.UUIDField(read_only=True, allow_null=True)
        verdict_status = serializers.ChoiceField(VERDICT_STATUSES, read_only=True)
        appeal = serializers.SerializerMethodField()

        def get_appeal(self, attempt) -> dict | None:
            """The player's appeal of this attempt and, once decided, its outcome."""
            appeal = next(
                (review for review in attempt.reviews.all() if review.kind == "appeal"), None
            )
            if appeal is None:
                return None
            return {
                "status": appeal.status,
                "decision": appeal.decision or None,
                "reason": appeal.reason if appeal.status == "decided" else "",
            }

        def get_prompt(self, attempt) -> str:
            return attempt.prompt or getattr(_own_text(attempt), "prompt", "")

        def get_response(self, attempt) -> str:
            return attempt.response or getattr(_own_text(attempt), "response", "")

        class Meta:
            model = ChallengeAttempt
            fields = (
                "id",
                "created_at",
                "succeeded",
                "verdict_status",
                "appeal",
                "score",
                "judge_rating",
                "tokens_total",
                "cost",
                "judge_tokens",
                "judge_cost",
                "elapsed_ms",
                "source",
                "prompt",
                "prompt_length",
                "response",
                "response_length",
                "proof_id",
            )

    @extend_schema(responses={200: HistorySerializer(many=True)})
    async def get(self, request, challenge_id):
        """The caller's own attempts, newest first: prompt and reply where kept (masked)."""
        return await run_orm(self._history, request, challenge_id)

    def _history(self, request, challenge_id):
        challenge = object_or_404(challenges_to_play(), challenge_id)
        end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
        attempts = attempts_of_player_queryset(challenge=challenge, end_user=end_user)
        return paginated_response(request, self, attempts, self.HistorySerializer)


def _own_text(attempt: ChallengeAttempt) -> AttemptOwnText | None:
    try:
        return attempt.own_text
    except AttemptOwnText.DoesNotExist:
        return None


class GuessCreateApi(AsyncApiView):
    """Answer mode `guess` (SPEC §4c): the player claims the secret they worked out."""

    permission_classes = [IsAuthenticated]

    class GuessInputSerializer(StrictSerializer):
        answer = serializers.CharField(min_length=1, max_length=ANSWER_MAX_CHARS)

    class GuessOutputSerializer(serializers.Serializer):
        attempt_id = serializers.UUIDField()
        challenge_succeeded = serializers.BooleanField()
        score = serializers.FloatField(allow_null=True)
        leaderboard_rank = serializers.IntegerField(allow_null=True)
        proof_id = serializers.UUIDField(allow_null=True, help_text=PROOF_ID_HELP)

    @extend_schema(request=GuessInputSerializer, responses={201: GuessOutputSerializer})
    async def post(self, request, challenge_id):
        challenge = await run_orm(object_or_404, challenges_to_play(), challenge_id)
        serializer = self.GuessInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = await attempt_guess_async(
            challenge=challenge,
            account=request.user,
            answer=serializer.validated_data["answer"],
            ip=client_ip(request),
            source=attempt_source(request),
        )
        return Response(self.GuessOutputSerializer(result).data, status=status.HTTP_201_CREATED)
