"""The raw lane for `GET /web/api/challenges/<id>/leaderboard`: a board read is one Redis GET.

The default board of a visible challenge is kept rendered in Redis (board_cache.py),
replaced after each commit that changes it. Only a board anyone may see is kept there, as
the public sees it: frozen while its event is, never one of players-only or hidden boards
(challenges/selectors/standings.py), so the lane serves nothing a viewer check would
refuse. A read of it — no `limit`, or the default — is answered here with the cached body
and its ETag, or an empty 304 when the client holds that ETag. A miss, another limit, a
bracket, another path or Redis out of reach goes to Django, which checks the viewer,
reads the database and fills the cache.
"""

from django.conf import settings

from challenges.board_cache import board_cached, etag_matches
from core.fastlane import LaneRequest, lane_respond

PREFIX = "/web/api/challenges/"
SUFFIX = "/leaderboard"
# DRF's APIView names the allowed methods; the session middleware varies on the cookie.
_HEADERS = ((b"allow", b"GET, HEAD, OPTIONS"), (b"vary", b"Cookie"))


def _default_limit_asked(query: str) -> bool:
    return query in ("", f"limit={settings.LEADERBOARD_DEFAULT_LIMIT}")


async def board_read_lane(request: LaneRequest, send) -> bool:
    path = request.scope["path"]
    if not path.endswith(SUFFIX) or not _default_limit_asked(request.query):
        return False
    challenge_id = path[len(PREFIX) : -len(SUFFIX)]
    if "/" in challenge_id:
        return False
    board = await board_cached(challenge_id)
    if board is None:
        return False
    headers = [*_HEADERS, (b"etag", board.etag.encode())]
    if etag_matches(request.header(b"if-none-match"), board.etag):
        await lane_respond(request, send, status=304, headers=headers)
    else:
        await lane_respond(request, send, status=200, body=board.json, headers=headers)
    return True
