"""The attempts endpoint with the reply streamed as Server-Sent Events (SPEC §4c).

`POST /web/api/challenges/{id}/attempts/stream` `{prompt}` takes the same checks and rate
limits as `.../attempts`; refusals before the model is asked are plain JSON errors. Then
`text/event-stream`: `chunk` events `{"text"}` as the model writes (masked), then one
`result` event with the attempts endpoint's JSON, or one `error` event with the error shape.
"""

import json
import logging
from collections.abc import AsyncIterator

from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer

from challenges.api.play import AttemptCreateApi, attempt_source
from challenges.models import ChallengeAttempt
from challenges.modes import play_mode_for
from challenges.play import PlayResult
from challenges.play_stream import StartedPlay, attempt_play_stream
from challenges.selectors.challenges import challenges_to_play
from challenges.selectors.levels import collection_topped_by, next_level
from challenges.templatetags.play_labels import outcome_words
from core.api import ErrorsAsJson, object_or_404
from core.async_api import AsyncApiView
from core.errors import ApplicationError
from core.ratelimit import client_ip
from core.threads import run_orm

logger = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"


class EventStreamRenderer(BaseRenderer):
    """Lets `Accept: text/event-stream` reach the view; errors are switched back to JSON."""

    media_type = EVENT_STREAM
    format = "sse"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return json.dumps(data).encode()


def server_sent_event(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def error_event(exc: ApplicationError) -> str:
    body = {"code": exc.code, "message": exc.message, "fields": exc.fields}
    return server_sent_event("error", {"error": body, "status": exc.status})


def _after_the_win(challenge) -> dict[str, str | None]:
    """Where the page leads a winner: the next level, or the finale of the collection
    this level tops."""
    level = next_level(challenge=challenge)
    if level:
        return {"next_level_url": reverse("challenge-page", args=[level.slug])}
    conquered = collection_topped_by(challenge=challenge)
    if conquered:
        return {
            "next_level_url": reverse("collection-page", args=[conquered.slug]) + "#finale",
            "next_level_label": f"You have conquered {conquered.name} →",
        }
    return {"next_level_url": None}


async def _events(started: StartedPlay) -> AsyncIterator[str]:
    # A comment first, so proxies and the browser see the stream open at once.
    yield ": the model is writing\n\n"
    try:
        async for piece in attempt_play_stream(started=started):
            if isinstance(piece, PlayResult):
                data = dict(AttemptCreateApi.OutputSerializer(piece).data)
                # The page's words for the verdict and the reply, as its form post has them.
                data["outcome"] = outcome_words(
                    result=piece,
                    guess_mode=started.challenge.answer_mode == "guess",
                    guessed=False,
                    strategy=started.challenge.scoring_strategy,
                )
                # The page offers the next level after a win, as its form-post answer does.
                data["next_level_url"] = None
                data["proof_url"] = (
                    reverse("proof-page", args=[piece.proof_id]) if piece.proof_id else None
                )
                if piece.challenge_succeeded:
                    data.update(await run_orm(_after_the_win, started.challenge))
                yield server_sent_event("result", data)
            else:
                yield server_sent_event("chunk", {"text": piece})
    except ApplicationError as exc:
        yield error_event(exc)
    except Exception:
        logger.exception("Streamed attempt failed for challenge %s", started.challenge.id)
        yield error_event(
            ApplicationError("Something went wrong.", code="server_error", status=500)
        )


class AttemptStreamApi(ErrorsAsJson, AsyncApiView):
    permission_classes = [IsAuthenticated]
    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @extend_schema(
        request=AttemptCreateApi.InputSerializer,
        responses={200: OpenApiResponse(description="text/event-stream: chunk…, result")},
    )
    async def post(self, request, challenge_id):
        challenge = await run_orm(object_or_404, challenges_to_play(), challenge_id)
        serializer = AttemptCreateApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        started = await play_mode_for(challenge).attempt_stream_start(
            challenge=challenge,
            account=request.user,
            prompt=serializer.validated_data["prompt"],
            ip=client_ip(request),
            # The page's play box streams with the session; scripts come with a token.
            source=attempt_source(request, by_session=ChallengeAttempt.Source.WEB),
            codename=serializer.validated_data.get("codename", ""),
        )
        response = StreamingHttpResponse(_events(started), content_type=EVENT_STREAM)
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        return response
