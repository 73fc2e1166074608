"""Player-facing read APIs under /web/api/ (public; personalised when logged in)."""

from django.conf import settings
from django.http import HttpResponse
from django.utils.cache import get_conditional_response
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.serializers import (
    PLAYERS_PARAMETER,
    LeaderboardSerializer,
    PublicChallengeSerializer,
)
from challenges.board_cache import board_answer_headers, board_cache_fill, board_cached
from challenges.board_render import board_body_for_limit, board_etag
from challenges.models import Challenge
from challenges.selectors.challenges import (
    challenge_visible_by_id,
    challenges_public,
    challenges_visible,
)
from challenges.selectors.standings import board_filters, board_view
from challenges.targets import codenames
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


def _board_for_viewer(challenge_id, limit: int, filters: dict, user, codename: str = ""):
    """(body, ETag, whether it is the same for everyone) of the board as this viewer may
    see it (`filters`: `board_filters`); 404 when they may not, or when the challenge has
    no target of that codename (a model's real name is none)."""
    challenge = challenge_visible_by_id(challenge_id=challenge_id)
    if challenge is None:
        raise NotFoundError()
    if codename and codename not in codenames(challenge):
        raise NotFoundError("This challenge has no target of that codename.")
    view = board_view(workspace=challenge.workspace, viewer=user, **filters)
    if not view.shown:
        raise NotFoundError()
    if limit == settings.LEADERBOARD_DEFAULT_LIMIT and view.bracket is None and not codename:
        board = board_cache_fill(challenge_id=challenge.id, players=view.players)
        return board.json, board.etag, view.same_for_everyone
    body = board_body_for_limit(challenge=challenge, limit=limit, view=view, codename=codename)
    return body, board_etag(body), view.same_for_everyone


def board_response(request, *, body: bytes, etag: str, same_for_everyone: bool) -> HttpResponse:
    """The board's JSON with its caching headers, or what Django's conditional machinery
    answers for them (an empty 304 when the client holds that ETag)."""
    response = HttpResponse(body, content_type="application/json")
    for name, value in board_answer_headers(etag=etag, same_for_everyone=same_for_everyone).items():
        response[name] = value
    return get_conditional_response(request, etag=etag, response=response)


BRACKET_PARAMETER = OpenApiParameter(
    "bracket", str, description="Only the players of this bracket (its slug); 404 if unknown"
)
TARGET_PARAMETER = OpenApiParameter(
    "target",
    str,
    description="Several targets: the board of this codename only; 404 if unknown. Without "
    "it the combined board, each row with `targets_broken`.",
)


# The default board (no `limit`, or LEADERBOARD_DEFAULT_LIMIT; no bracket; every player, or
# the agents' or humans' part) is served from the board cache, no query on a hit (only
# public boards are stored there); other reads
# check the viewer and read the database. While the event is frozen every read shows the
# standings as of the freeze (challenges/selectors/standings.py). (A comment, not a
# docstring: the schema would show it.)
class ChallengeLeaderboardApi(AsyncApiView):
    @extend_schema(
        parameters=[
            OpenApiParameter("limit", int, description="1–100, default 10"),
            BRACKET_PARAMETER,
            PLAYERS_PARAMETER,
            TARGET_PARAMETER,
        ],
        responses=LeaderboardSerializer,
    )
    async def get(self, request, challenge_id):
        limit = leaderboard_limit(request)
        challenge_id = uuid_or_404(challenge_id)
        filters = board_filters(request.query_params)
        codename = request.query_params.get("target", "")
        board = None
        default = limit == settings.LEADERBOARD_DEFAULT_LIMIT and not codename
        if default and not filters["bracket_slug"]:
            players = "" if filters["players"] == "all" else filters["players"]
            board = await board_cached(challenge_id, players)
        if board is not None:  # only boards anyone may see are stored
            body, etag, same_for_everyone = board.json, board.etag, True
        else:
            body, etag, same_for_everyone = await run_orm(
                _board_for_viewer, challenge_id, limit, filters, request.user, codename
            )
        return board_response(request, body=body, etag=etag, same_for_everyone=same_for_everyone)
