"""The Dify bridge's HTTP endpoints under /bridge/dify/ (no session, no CSRF)."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers

from challenges.bridge import payload, services
from challenges.bridge.endpoint import BridgeApi
from core.api import StrictSerializer
from judging.judge_config import JUDGE_CONFIG_KEYS, JUDGE_MODEL_RULE, judge_config_errors


class InlineRuleSerializer(StrictSerializer):
    # Plain text checked by the service: a second choice set named success_type would
    # clash with the console's in the OpenAPI schema.
    success_type = payload.RULE_NAME.field(help_text="contains or regex")
    success_pattern = payload.SUCCESS_PATTERN.field()
    scoring_strategy = payload.RULE_NAME.field(required=False, allow_blank=True)


class ChallengeEvaluatorInputSerializer(StrictSerializer):
    """The call's shape; what it asks for is decided by bridge_challenge_evaluate_async."""

    challenge_id = payload.CHALLENGE_ID.field(required=False, allow_blank=True)
    inline = InlineRuleSerializer(required=False)
    success_type = payload.RULE_NAME.field(
        required=False, help_text="contains or regex (inline rule)"
    )
    success_pattern = payload.SUCCESS_PATTERN.field(required=False)
    scoring_strategy = payload.RULE_NAME.field(required=False, allow_blank=True)
    output = payload.OUTPUT.field(allow_blank=True)
    user = payload.user_field(required=False, allow_blank=True)
    workflow_run_id = payload.WORKFLOW_RUN_ID.field()
    prompt = payload.PROMPT.field(required=False, allow_blank=True)
    tokens_total = payload.count_field()
    elapsed_ms = payload.count_field()
    variables = serializers.DictField(required=False)
    conversation_id = payload.CONVERSATION_ID.field(
        required=False,
        allow_blank=True,
        help_text="A Dify chatflow's conversation: the output is a turn of that session "
        "(conversation challenges, SPEC §9)",
    )
    mask_variables = payload.mask_variables_field()

    evaluation_mode = payload.RULE_NAME.field(
        required=False,
        allow_blank=True,
        help_text="Inline calls: 'rules' (the default) or 'llm-judge' (with goal, judge_config)",
    )
    goal = payload.JUDGE_TEXT.field(required=False, allow_blank=True)
    judge_config = serializers.JSONField(
        required=False, allow_null=True, help_text="The keys of a challenge's judge_config"
    )
    # An upstream judging-llm node's outputs, taken instead of a second judge call.
    judge_passed = serializers.BooleanField(required=False, allow_null=True)
    judge_rating = serializers.FloatField(required=False, allow_null=True)
    judge_feedback = payload.JUDGE_TEXT.field(required=False, allow_blank=True, allow_null=True)
    judge_raw = serializers.JSONField(required=False, allow_null=True)
    link_code = payload.LINK_CODE.field(
        required=False,
        allow_blank=True,
        help_text="A player's one-time code: links this 'user' to their site account",
    )

    def validate(self, data: dict) -> dict:
        # Shape only: FloatField would read true as 1.0.
        if isinstance(self.initial_data.get("judge_rating"), bool):
            raise serializers.ValidationError({"judge_rating": ["A number, not true or false."]})
        # An inline rule is sent nested or at the top level: one dict either way.
        inline = dict(data.get("inline") or {})
        for name in ("success_type", "success_pattern", "scoring_strategy"):
            if name in data:
                inline.setdefault(name, data[name])
        data["inline"] = inline
        return data


class ChallengeEvaluatorOutputSerializer(serializers.Serializer):
    challenge_succeeded = serializers.BooleanField(
        allow_null=True, help_text="Null while a judge panel's verdict is under review."
    )
    verdict_status = serializers.CharField(required=False, help_text="'under_review' only.")
    judge_passed = serializers.BooleanField(required=False)
    message = serializers.CharField()
    judge_rating = serializers.IntegerField(required=False, allow_null=True)
    judge_feedback = serializers.CharField(required=False)
    attempt_id = serializers.UUIDField(required=False)
    output = serializers.CharField()


class ChallengeEvaluatorApi(BridgeApi):
    @extend_schema(
        request={
            "application/json": ChallengeEvaluatorInputSerializer,
            "text/plain": ChallengeEvaluatorInputSerializer,
        },
        responses=ChallengeEvaluatorOutputSerializer,
        summary="Dify challenge-evaluator node",
    )
    async def post(self, request):
        data = self.input(request, ChallengeEvaluatorInputSerializer)
        result = await services.bridge_challenge_evaluate_async(
            key=request.auth,
            workflow_run_id=data["workflow_run_id"],
            output=data["output"],
            challenge_ref=data.get("challenge_id", ""),
            inline=data["inline"],
            user=data.get("user", ""),
            prompt=data.get("prompt", ""),
            tokens_total=data.get("tokens_total"),
            elapsed_ms=data.get("elapsed_ms"),
            variables=data.get("variables") or {},
            mask_variables=data.get("mask_variables") or [],
            asked=services.EvaluationAsked(
                mode=data.get("evaluation_mode") or "",
                goal=data.get("goal") or "",
                judge_config=data.get("judge_config"),
                chained=services.ChainedValues(
                    passed=data.get("judge_passed"),
                    rating=data.get("judge_rating"),
                    feedback=data.get("judge_feedback"),
                    raw=data.get("judge_raw"),
                ),
            ),
            link_code=data.get("link_code", ""),
            conversation_id=data.get("conversation_id", ""),
        )
        return self.answer(result)


class _JudgeSetting(serializers.Field):
    """A judge setting passed through as sent: judging.judge_config checks it, so the
    bridge accepts and refuses exactly what a challenge's judge_config does."""

    def to_internal_value(self, data: Any) -> Any:
        return data

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(OpenApiTypes.STR)
class _JudgeText(_JudgeSetting):
    pass


@extend_schema_field(OpenApiTypes.NUMBER)
class _JudgeNumber(_JudgeSetting):
    pass


@extend_schema_field(OpenApiTypes.INT)
class _JudgeWholeNumber(_JudgeSetting):
    pass


class JudgingLlmInputSerializer(StrictSerializer):
    goal = payload.JUDGE_TEXT.field(allow_blank=True)
    response = payload.OUTPUT.field(allow_blank=True)
    hints = payload.JUDGE_TEXT.field(required=False, allow_blank=True)
    workflow_run_id = payload.WORKFLOW_RUN_ID.field(required=False, allow_blank=True)
    judge_model = _JudgeText(required=False, allow_null=True, help_text=JUDGE_MODEL_RULE)
    temperature = _JudgeNumber(required=False, allow_null=True, help_text="0 to 2")
    max_tokens = _JudgeWholeNumber(required=False, allow_null=True, help_text="1 to 32000")
    rubric_prompt_template = _JudgeText(required=False, allow_null=True)
    rating_scale = _JudgeWholeNumber(required=False, allow_null=True, help_text="1 to 100")
    pass_threshold = _JudgeNumber(required=False, allow_null=True, help_text="0 to rating_scale")

    def validate(self, data: dict) -> dict:
        data["judge_config"] = {name: data.pop(name) for name in JUDGE_CONFIG_KEYS if name in data}
        errors = judge_config_errors(data["judge_config"])
        if errors:
            raise serializers.ValidationError(errors)
        return data


class JudgingLlmOutputSerializer(serializers.Serializer):
    judge_passed = serializers.BooleanField()
    judge_rating = serializers.IntegerField(allow_null=True)
    judge_feedback = serializers.CharField()
    judge_raw = serializers.DictField(required=False)


class JudgingLlmApi(BridgeApi):
    @extend_schema(
        request={
            "application/json": JudgingLlmInputSerializer,
            "text/plain": JudgingLlmInputSerializer,
        },
        responses=JudgingLlmOutputSerializer,
        summary="Dify judging-llm node",
    )
    async def post(self, request):
        data = self.input(request, JudgingLlmInputSerializer)
        result = await services.bridge_judge_async(
            key=request.auth,
            goal=data["goal"],
            response=data["response"],
            hints=data.get("hints", ""),
            config=data["judge_config"],
            workflow_run_id=data.get("workflow_run_id", ""),
        )
        return self.answer(result)
