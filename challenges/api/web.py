"""Player-facing read APIs under /web/api/ (public; personalised when logged in)."""

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotModified
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.serializers import LeaderboardSerializer, PublicChallengeSerializer
from challenges.board_cache import board_cache_fill, board_cached, etag_matches
from challenges.board_render import board_body_for_limit, board_etag
from challenges.models import Challenge
from challenges.selectors.challenges import (
    challenge_visible_by_id,
    challenges_public,
    challenges_visible,
)
from core.api import leaderboard_limit, object_or_404, paginated_response, uuid_or_404
from core.async_api import AsyncApiView
from core.errors import NotFoundError
from core.threads import run_orm


def _visible_challenge(challenge_id) -> Challenge:
    return object_or_404(challenges_visible(), challenge_id)


class ChallengeListApi(APIView):
    @extend_schema(responses=PublicChallengeSerializer(many=True))
    def get(self, request):
        return paginated_response(request, self, challenges_public(), PublicChallengeSerializer)


class ChallengeDetailApi(APIView):
    @extend_schema(responses=PublicChallengeSerializer)
    def get(self, request, challenge_id):
        return Response(PublicChallengeSerializer(_visible_challenge(challenge_id)).data)


def _board_body(challenge_id, limit: int) -> bytes | None:
    challenge = challenge_visible_by_id(challenge_id=challenge_id)
    return board_body_for_limit(challenge=challenge, limit=limit) if challenge else None


def board_response(*, body: bytes, etag: str, if_none_match: str | None) -> HttpResponse:
    """The board's JSON with its ETag, or an empty 304 when the client holds that ETag."""
    if etag_matches(if_none_match, etag):
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(body, content_type="application/json")
    response["ETag"] = etag
    return response


# The default board (no `limit`, or LEADERBOARD_DEFAULT_LIMIT) is served from the board
# cache, no query on a hit; other limits are read from the database. (A comment, not a
# docstring: the schema would show it.)
class ChallengeLeaderboardApi(AsyncApiView):
    @extend_schema(
        parameters=[OpenApiParameter("limit", int, description="1–100, default 10")],
        responses=LeaderboardSerializer,
    )
    async def get(self, request, challenge_id):
        limit = leaderboard_limit(request)
        challenge_id = uuid_or_404(challenge_id)
        if limit == settings.LEADERBOARD_DEFAULT_LIMIT:
            board = await board_cached(challenge_id) or await run_orm(
                board_cache_fill, challenge_id=challenge_id
            )
            body, etag = (board.json, board.etag) if board else (None, "")
        else:
            body = await run_orm(_board_body, challenge_id, limit)
            etag = board_etag(body) if body is not None else ""
        if body is None:
            raise NotFoundError()
        return board_response(
            body=body, etag=etag, if_none_match=request.headers.get("If-None-Match")
        )
