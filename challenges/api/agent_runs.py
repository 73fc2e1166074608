"""Agent runs over the web API (SPEC §9): start one with the slots' texts, read it back.

`POST /web/api/challenges/{id}/runs` `{slots, codename?}` runs the scenario and answers
the trace; `GET /web/api/runs/{rid}` is the same body for its player only (404 for anyone
else). Results and answers are masked as replies are.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from challenges.api.play import PROOF_ID_HELP, VERDICT_STATUSES, attempt_source
from challenges.models import AgentRun, AgentStep, ChallengeAttempt
from challenges.modes import play_mode_for
from challenges.selectors.agent_runs import agent_run_of_player, agent_run_steps
from challenges.selectors.challenges import challenges_to_play
from challenges.services.agent_runs import AgentRunResult
from core.api import MoneyField, StrictSerializer, object_or_404
from core.async_api import AsyncApiView
from core.errors import NotFoundError
from core.ratelimit import client_ip
from core.threads import run_orm


class AgentStepSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    kind = serializers.ChoiceField(AgentStep.Kind.choices)
    content = serializers.CharField(required=False, help_text="model and final steps")
    tool = serializers.CharField(required=False, help_text="tool_call and tool_result steps")
    args = serializers.DictField(required=False, help_text="tool_call steps")
    refused_by = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="tool_call steps: the defence that refused the call (tool_guard, "
        "llm_tool_check, max_tool_calls) or 'invalid' (no such tool, bad arguments); null "
        "when the tool answered",
    )
    result = serializers.CharField(required=False, help_text="tool_result steps, masked")
    tokens_total = serializers.IntegerField(required=False, allow_null=True)
    cost = MoneyField(required=False)


def step_body(step: AgentStep) -> dict:
    body: dict = {"index": step.index, "kind": step.kind}
    if step.kind in (AgentStep.Kind.MODEL, AgentStep.Kind.FINAL):
        cost = None if step.cost is None else float(step.cost)
        body.update(content=step.content, tokens_total=step.tokens_total, cost=cost)
    elif step.kind == AgentStep.Kind.TOOL_CALL:
        body.update(tool=step.tool, args=step.args or {}, refused_by=step.refused_by or None)
    else:
        body.update(tool=step.tool, result=step.content)
    # Each kind carries its own keys only (SPEC §9), so the nested serializer is not run.
    return body


class BenignSerializer(serializers.Serializer):
    task = serializers.CharField()
    passed = serializers.BooleanField()


class AgentRunSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    challenge = serializers.UUIDField()
    codename = serializers.CharField(allow_null=True, help_text="Several targets: the one played")
    challenge_succeeded = serializers.BooleanField()
    verdict_status = serializers.ChoiceField(VERDICT_STATUSES)
    why = serializers.CharField(help_text="Why the run won or not")
    stop_reason = serializers.ChoiceField(AgentRun.StopReason.choices)
    steps = AgentStepSerializer(many=True)
    final_answer = serializers.CharField(allow_blank=True)
    tokens_total = serializers.IntegerField()
    cost = MoneyField(help_text="At the workspace's price of the model; null when it has none")
    elapsed_ms = serializers.IntegerField()
    benign = BenignSerializer(many=True)
    slots = serializers.DictField(child=serializers.CharField(allow_blank=True))
    attempt_id = serializers.UUIDField()
    proof_id = serializers.UUIDField(allow_null=True, help_text=PROOF_ID_HELP)
    leaderboard_rank = serializers.IntegerField(required=False, allow_null=True)
    created_at = serializers.DateTimeField()


def run_body(run: AgentRun, steps: list[AgentStep], *, rank: object = ...) -> dict:
    attempt = run.attempt
    body = {
        "id": run.id,
        "challenge": run.challenge_id,
        "codename": run.codename or None,
        "challenge_succeeded": run.succeeded,
        "verdict_status": attempt.verdict_status,
        "why": run.why,
        "stop_reason": run.stop_reason,
        "steps": [],
        "final_answer": run.final_answer,
        "tokens_total": run.tokens_total,
        "cost": run.cost,
        "elapsed_ms": run.elapsed_ms,
        "benign": run.benign,
        "slots": run.slots,
        "attempt_id": attempt.id,
        "proof_id": attempt.proof_id,
        "created_at": run.created_at,
    }
    if rank is not ...:
        body["leaderboard_rank"] = rank
    data = AgentRunSerializer(body).data
    data["steps"] = [step_body(step) for step in steps]
    return data


def _source(request) -> str:
    # The page's form sends with the session cookie; scripts and agents come with a token.
    return attempt_source(request, by_session=ChallengeAttempt.Source.WEB)


class AgentRunCreateApi(AsyncApiView):
    permission_classes = [IsAuthenticated]

    class AgentRunInputSerializer(StrictSerializer):
        slots = serializers.DictField(
            child=serializers.CharField(allow_blank=True, trim_whitespace=False),
            help_text="Slot name to the text you write into it",
        )
        codename = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=100,
            help_text="Several targets with target_assignment 'choice': the model to attack.",
        )

    @extend_schema(request=AgentRunInputSerializer, responses={201: AgentRunSerializer})
    async def post(self, request, challenge_id):
        challenge = await run_orm(object_or_404, challenges_to_play(), challenge_id)
        serializer = self.AgentRunInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result: AgentRunResult = await play_mode_for(challenge).run_async(
            challenge=challenge,
            account=request.user,
            slots=serializer.validated_data["slots"],
            ip=client_ip(request),
            source=_source(request),
            codename=serializer.validated_data.get("codename", ""),
        )
        body = run_body(result.run, result.steps, rank=result.leaderboard_rank)
        return Response(body, status=status.HTTP_201_CREATED)


class AgentRunDetailApi(AsyncApiView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: AgentRunSerializer})
    async def get(self, request, run_id):
        """The run's trace, masked as stored: its player's only."""
        return Response(await run_orm(self._read, request, run_id))

    def _read(self, request, run_id) -> dict:
        run = agent_run_of_player(run_id=run_id, account=request.user)
        if run is None:
            raise NotFoundError("No such run.")
        return run_body(run, agent_run_steps(run=run))
