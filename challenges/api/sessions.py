"""Conversation sessions over the web API (SPEC §9): open one, send turns, read it back.

`POST /web/api/challenges/{id}/sessions` opens a session, `POST /web/api/sessions/{sid}/turns`
sends a turn (`.../turns/stream` streams the reply as attempts do), and
`GET /web/api/sessions/{sid}` is the transcript: its player's only, a 404 for anyone else.
"""

from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from challenges.api.play import PROOF_ID_HELP, attempt_source
from challenges.api.stream import (
    EVENT_STREAM,
    AttemptStreamApi,
    error_event,
    server_sent_event,
)
from challenges.models import PROMPT_MAX_CHARS, ChallengeAttempt, PlaySession
from challenges.modes import play_mode_for
from challenges.modes.conversation import TurnPlan, turn_play_async, turn_stream, turn_stream_start
from challenges.selectors.challenges import challenges_to_play
from challenges.selectors.sessions import session_of_player, session_turns, session_turns_left
from challenges.services.sessions import TurnOutcome
from core.api import MoneyField, StrictSerializer, object_or_404
from core.async_api import AsyncApiView
from core.errors import ApplicationError, NotFoundError
from core.ratelimit import client_ip
from core.threads import run_orm


class TurnSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    prompt = serializers.CharField()
    response = serializers.CharField()
    tokens_total = serializers.IntegerField(allow_null=True)
    challenge_succeeded = serializers.BooleanField(source="succeeded")
    judge_rating = serializers.IntegerField(allow_null=True)
    judge_feedback = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class SessionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    challenge = serializers.UUIDField(source="challenge_id")
    codename = serializers.CharField(allow_null=True, default=None)
    state = serializers.ChoiceField(choices=PlaySession.State.choices)
    turns = TurnSerializer(many=True)
    turns_left = serializers.IntegerField()
    max_turns = serializers.IntegerField()
    tokens_total = serializers.IntegerField()
    session_token_budget = serializers.IntegerField(allow_null=True)
    attempt_id = serializers.UUIDField(allow_null=True)
    proof_id = serializers.UUIDField(allow_null=True, help_text=PROOF_ID_HELP)
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)


def session_body(session: PlaySession) -> dict:
    challenge = session.challenge
    attempt = session.attempt
    return SessionSerializer(
        {
            "id": session.id,
            "challenge_id": session.challenge_id,
            "codename": session.codename or None,
            "state": session.state,
            "turns": session_turns(session=session),
            "turns_left": session_turns_left(session=session, challenge=challenge),
            "max_turns": challenge.max_turns,
            "tokens_total": session.tokens_total,
            "session_token_budget": challenge.session_token_budget,
            "attempt_id": attempt.id if attempt else None,
            "proof_id": attempt.proof_id if attempt else None,
            "started_at": session.started_at,
            "ended_at": session.ended_at,
        }
    ).data


class SessionStateSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    state = serializers.ChoiceField(choices=PlaySession.State.choices)
    turns_left = serializers.IntegerField()
    tokens_total = serializers.IntegerField()


class TurnOutputSerializer(serializers.Serializer):
    index = serializers.IntegerField(source="turn.index")
    prompt = serializers.CharField(source="turn.prompt")
    response = serializers.CharField()
    tokens_total = serializers.IntegerField(source="turn.tokens_total", allow_null=True)
    cost = MoneyField(
        source="turn.cost",
    )
    challenge_succeeded = serializers.BooleanField(
        allow_null=True, help_text="Null while a judge panel's verdict is under review."
    )
    judge_rating = serializers.IntegerField(source="turn.judge_rating", allow_null=True)
    judge_feedback = serializers.CharField(source="turn.judge_feedback", allow_blank=True)
    attempt_id = serializers.UUIDField(allow_null=True)
    proof_id = serializers.UUIDField(allow_null=True, help_text=PROOF_ID_HELP)
    leaderboard_rank = serializers.IntegerField(allow_null=True)
    session = serializers.SerializerMethodField()

    def get_session(self, outcome: TurnOutcome) -> dict:
        return SessionStateSerializer(
            {
                "id": outcome.session.id,
                "state": outcome.session.state,
                "turns_left": outcome.turns_left,
                "tokens_total": outcome.session.tokens_total,
            }
        ).data


class TurnInputSerializer(StrictSerializer):
    prompt = serializers.CharField(min_length=1, max_length=PROMPT_MAX_CHARS, trim_whitespace=False)


def _source(request) -> str:
    # The page's chat sends with the session cookie; scripts and agents come with a token.
    return attempt_source(request, by_session=ChallengeAttempt.Source.WEB)


class SessionCreateApi(AsyncApiView):
    permission_classes = [IsAuthenticated]

    class SessionOpenInputSerializer(StrictSerializer):
        codename = serializers.CharField(required=False, allow_blank=True, max_length=100)

    @extend_schema(request=SessionOpenInputSerializer, responses={201: SessionSerializer})
    async def post(self, request, challenge_id):
        serializer = self.SessionOpenInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        codename = serializer.validated_data.get("codename", "")
        body = await run_orm(self._open, request, challenge_id, codename)
        return Response(body, status=status.HTTP_201_CREATED)

    def _open(self, request, challenge_id, codename: str) -> dict:
        challenge = object_or_404(challenges_to_play(), challenge_id)
        session = play_mode_for(challenge).session_open(
            challenge=challenge, account=request.user, ip=client_ip(request), codename=codename
        )
        return session_body(session)


class SessionDetailApi(AsyncApiView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: SessionSerializer})
    async def get(self, request, session_id):
        """The session's transcript, masked as stored: its player's only."""
        return Response(await run_orm(self._read, request, session_id))

    def _read(self, request, session_id) -> dict:
        session = session_of_player(session_id=session_id, account=request.user)
        if session is None:
            raise NotFoundError("No such session.")
        return session_body(session)


class TurnCreateApi(AsyncApiView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=TurnInputSerializer, responses={201: TurnOutputSerializer})
    async def post(self, request, session_id):
        serializer = TurnInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        outcome = await turn_play_async(
            session_id=session_id,
            account=request.user,
            prompt=serializer.validated_data["prompt"],
            ip=client_ip(request),
            source=_source(request),
        )
        return Response(TurnOutputSerializer(outcome).data, status=status.HTTP_201_CREATED)


def _after_turn(outcome: TurnOutcome) -> dict:
    proof = outcome.proof_id
    return {"proof_url": reverse("proof-page", args=[proof]) if proof else None}


async def _turn_events(turn: TurnPlan):
    yield ": the model is writing\n\n"
    try:
        async for piece in turn_stream(turn=turn):
            if isinstance(piece, TurnOutcome):
                data = dict(TurnOutputSerializer(piece).data)
                data.update(_after_turn(piece))
                yield server_sent_event("result", data)
            else:
                yield server_sent_event("chunk", {"text": piece})
    except ApplicationError as exc:
        yield error_event(exc)


class TurnStreamApi(AttemptStreamApi):
    @extend_schema(
        request=TurnInputSerializer,
        responses={200: OpenApiResponse(description="text/event-stream: chunk…, result")},
    )
    async def post(self, request, session_id):
        serializer = TurnInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        turn = await turn_stream_start(
            session_id=session_id,
            account=request.user,
            prompt=serializer.validated_data["prompt"],
            ip=client_ip(request),
            source=_source(request),
        )
        response = StreamingHttpResponse(_turn_events(turn), content_type=EVENT_STREAM)
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        return response
