"""POST /bridge/dify/team-challenge: the seed's `team-challenge` node.

Dify waits for the node's outputs, so the pairing is judged within the request, through
the services the Celery task uses. The view is async: the database work before and after
runs on the request's thread with its connection handed back in between, and the target
and judge calls run on a thread that holds no connection. Idempotent on
`workflow_run_id`: the first answer is stored with the pairing's points by the bridge's one
delivery store (challenges.bridge.services.bridge_store), and a repeat gets it back with
nothing new written.
"""

import logging
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import IntegrityError
from django.db.models import Sum
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from challenges.bridge import payload
from challenges.bridge.endpoint import BridgeApi
from challenges.bridge.services import bridge_store, bridge_stored_answer, under_review_answer
from challenges.models import PROMPT_MAX_CHARS, BridgeKey
from core.errors import ApplicationError, NotFoundError
from core.threads import run_orm
from players.services import end_user_for_external_id
from redblue.models import RedBlueChallenge, Team, TeamPairing, TeamStanding, TeamSubmission
from redblue.teams.evaluation import PairingOutcome, TargetError, pairing_evaluate_async
from redblue.teams.services.pairings import pairing_complete, pairing_fail
from redblue.teams.services.submissions import submission_create

logger = logging.getLogger(__name__)

ENDPOINT = "team-challenge"
AGENT_NOT_ON_THE_BRIDGE = (
    "This red/blue challenge is an agent scenario: Red writes the slots' texts and Blue the "
    "agent's defence on this site (POST /web/api/red-blue-challenges/{id}/submit), not "
    "through a Dify node."
)


class TeamChallengeInputSerializer(serializers.Serializer):
    red_blue_challenge_id = payload.CHALLENGE_ID.field()
    team_choice = serializers.CharField(max_length=10, help_text="red or blue")
    attack_prompt = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=PROMPT_MAX_CHARS
    )
    defense_prompt = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=PROMPT_MAX_CHARS
    )
    user = payload.user_field()
    workflow_run_id = payload.WORKFLOW_RUN_ID.field()

    def validate_team_choice(self, value: str) -> str:
        if value not in Team.values:
            raise serializers.ValidationError("Use 'red' or 'blue'.")
        return value

    def validate(self, data: dict) -> dict:
        field = "attack_prompt" if data["team_choice"] == Team.RED else "defense_prompt"
        if not (data.get(field) or "").strip():
            raise serializers.ValidationError(
                {field: [f"Required when team_choice is '{data['team_choice']}'."]}
            )
        data["prompt"] = data[field]
        return data


class TeamChallengeOutputSerializer(serializers.Serializer):
    team = serializers.CharField(help_text="red or blue")
    judge_passed = serializers.BooleanField(
        allow_null=True, help_text="Null while a judge panel's verdict is under review."
    )
    verdict_status = serializers.CharField(required=False, help_text="'under_review' only.")
    judge_rating = serializers.IntegerField(allow_null=True)
    judge_feedback = serializers.CharField()
    categories = serializers.DictField(
        child=serializers.BooleanField(allow_null=True),
        help_text="Category code → breached; null for a category under review.",
    )
    team_points = serializers.FloatField()
    total_points = serializers.FloatField()
    status = serializers.CharField()
    submission_id = serializers.UUIDField()
    pairing_id = serializers.UUIDField(allow_null=True)


@dataclass(frozen=True)
class _Prepared:
    replay: dict[str, Any] | None = None
    challenge: RedBlueChallenge | None = None
    team: str = ""
    submission: TeamSubmission | None = None
    pairing: TeamPairing | None = None
    body: dict[str, Any] | None = None  # the answer when there is nothing to judge


def _stored(*, workspace_id, workflow_run_id: str) -> dict | None:
    return bridge_stored_answer(
        workspace_id=workspace_id, endpoint=ENDPOINT, workflow_run_id=workflow_run_id
    )


def _challenge_of(key: BridgeKey, ref: str) -> RedBlueChallenge:
    try:
        challenge = RedBlueChallenge.objects.filter(
            workspace_id=key.workspace_id, id=uuid.UUID(ref)
        ).first()
    except ValueError:
        challenge = None
    if challenge is None:
        raise NotFoundError("No red/blue challenge with that id in this bridge key's workspace.")
    return challenge


def _side_total(challenge: RedBlueChallenge, team: str) -> float:
    total = TeamStanding.objects.filter(red_blue_challenge=challenge, team=team).aggregate(
        points=Sum("points")
    )["points"]
    return float(total or Decimal(0))


def _answer(
    *,
    team: str,
    submission: TeamSubmission,
    pairing: TeamPairing | None,
    status: str,
    feedback: str,
    total: float,
    outcome: PairingOutcome | None = None,
) -> dict[str, Any]:
    points = 0.0
    if outcome is not None and outcome.points is not None:
        points = float(outcome.points.red if team == Team.RED else outcome.points.blue)
    body = {
        "team": team,
        "judge_passed": bool(outcome and outcome.verdict.breached),
        "judge_rating": outcome.verdict.rating if outcome else None,
        "judge_feedback": feedback,
        "categories": outcome.verdict.as_flags() if outcome else {},
        "team_points": points,
        "total_points": total,
        "status": status,
        "submission_id": str(submission.id),
        "pairing_id": str(pairing.id) if pairing else None,
    }
    if outcome is not None and outcome.verdict.under_review:
        # As the challenge bridge answers a disputed attempt: no verdict until a person
        # decides; the disputed categories have none either (docs/reviews.md).
        disputed = set(outcome.verdict.disputed)
        body["categories"] = {
            code: None if code in disputed else breached
            for code, breached in body["categories"].items()
        }
        under_review_answer(body, verdict_key="judge_passed")
    return body


def _remember(*, key: BridgeKey, workflow_run_id: str, body: dict) -> tuple[dict, bool]:
    answer = bridge_store(
        workspace_id=key.workspace_id, endpoint=ENDPOINT, workflow_run_id=workflow_run_id, body=body
    )
    return answer.body, answer.replayed


def _in_progress() -> ApplicationError:
    return ApplicationError(
        "This workflow run is being judged; repeat the call in a moment for its answer.",
        code="in_progress",
        status=409,
        headers={"Retry-After": "2"},
    )


class TeamChallengeApi(BridgeApi):
    @extend_schema(
        request={
            "application/json": TeamChallengeInputSerializer,
            "text/plain": TeamChallengeInputSerializer,
        },
        responses=TeamChallengeOutputSerializer,
        summary="Dify team-challenge node",
    )
    async def post(self, request):
        key: BridgeKey = request.auth
        prepared = await run_orm(self._prepare, request, key)
        if prepared.replay is not None:
            return Response(prepared.replay, headers={"Idempotent-Replayed": "true"})
        if prepared.body is not None:
            return Response(prepared.body)
        attack, defense = prepared.pairing.attack_submission, prepared.pairing.defense_submission
        try:
            outcome = await pairing_evaluate_async(
                challenge=prepared.challenge,
                attack=attack.prompt,
                defense=defense.prompt,
                user=str(attack.end_user_id or ""),
            )
        except TargetError as exc:
            logger.warning("Bridge team-challenge target failed: %s", exc)
            outcome = None
        body, replayed = await run_orm(self._finish, key, prepared, outcome)
        headers = {"Idempotent-Replayed": "true"} if replayed else {}
        return Response(body, headers=headers)

    def _prepare(self, request, key: BridgeKey) -> _Prepared:
        data = self.input(request, TeamChallengeInputSerializer)
        run = data["workflow_run_id"]
        stored = _stored(workspace_id=key.workspace_id, workflow_run_id=run)
        if stored is not None:
            return _Prepared(replay=stored)
        challenge = _challenge_of(key, data["red_blue_challenge_id"])
        if not challenge.is_active:
            raise ApplicationError("This challenge is closed.", code="challenge_closed", status=409)
        if challenge.agent is not None:
            # Red writes slots and Blue layers of defence here; a node's one prompt is neither.
            raise ApplicationError(AGENT_NOT_ON_THE_BRIDGE, code="wrong_mode", status=409)
        end_user = end_user_for_external_id(workspace=key.workspace, external_id=data["user"])
        team = data["team_choice"]
        if TeamSubmission.objects.filter(
            workspace_id=key.workspace_id, workflow_run_id=run
        ).exists():
            raise _in_progress()
        try:
            result = submission_create(
                challenge=challenge,
                end_user=end_user,
                team=team,
                prompt=data["prompt"],
                source=TeamSubmission.Source.BRIDGE,
                workflow_run_id=run,
                judge_own_pairing_here=True,
            )
        except IntegrityError:
            stored = _stored(workspace_id=key.workspace_id, workflow_run_id=run)
            if stored is not None:
                return _Prepared(replay=stored)
            raise _in_progress() from None
        if result.checking:
            body = _answer(
                team=team,
                submission=result.submission,
                pairing=None,
                status="checking",
                feedback="This defence is first run against the attacks that broke earlier "
                "defences of this challenge; it counts once none of them breaks it.",
                total=_side_total(challenge, team),
            )
            body, replayed = _remember(key=key, workflow_run_id=run, body=body)
            return _Prepared(replay=body) if replayed else _Prepared(body=body)
        if result.own_pairing is None:
            other = "defence" if team == Team.RED else "attack"
            body = _answer(
                team=team,
                submission=result.submission,
                pairing=None,
                status="waiting",
                feedback=f"No {other} to pair with yet; this submission waits for one "
                "and is judged when it arrives.",
                total=_side_total(challenge, team),
            )
            body, replayed = _remember(key=key, workflow_run_id=run, body=body)
            return _Prepared(replay=body) if replayed else _Prepared(body=body)
        pairing = TeamPairing.objects.select_related("attack_submission", "defense_submission").get(
            pk=result.own_pairing.pk
        )
        return _Prepared(
            challenge=challenge, team=team, submission=result.submission, pairing=pairing
        )

    def _finish(
        self, key: BridgeKey, prepared: _Prepared, outcome: PairingOutcome | None
    ) -> tuple[dict, bool]:
        run = prepared.submission.workflow_run_id
        challenge, team = prepared.challenge, prepared.team

        def record() -> tuple[None, dict]:
            # The pairing's points and the stored answer in one transaction.
            if outcome is None:
                pairing_fail(pairing=prepared.pairing, reason="target did not answer")
                return None, _answer(
                    team=team,
                    submission=prepared.submission,
                    pairing=prepared.pairing,
                    status="failed",
                    feedback="The target model did not answer; this pairing does not count.",
                    total=_side_total(challenge, team),
                )
            pairing_complete(pairing=prepared.pairing, outcome=outcome)
            return None, _answer(
                team=team,
                submission=prepared.submission,
                pairing=prepared.pairing,
                # "review" while a person decides, as the pairing's own status says.
                status="review" if outcome.verdict.under_review else "completed",
                feedback=outcome.verdict.feedback,
                total=_side_total(challenge, team),
                outcome=outcome,
            )

        answer = bridge_store(
            workspace_id=key.workspace_id,
            endpoint=ENDPOINT,
            workflow_run_id=run,
            body={},
            record=record,
        )
        if answer.replayed:
            return answer.body, True
        body = answer.body
        logger.info(
            "bridge_call endpoint=%s workspace=%s key=%s run=%s challenge=%s status=%s",
            ENDPOINT,
            key.workspace_id,
            key.prefix,
            run,
            challenge.id,
            body["status"],
        )
        return body, False
