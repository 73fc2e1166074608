"""The raw lane for `GET /web/api/challenges/<id>/leaderboard`: a board read is one Redis read.

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
from django.http import HttpRequest
from django.utils.cache import get_conditional_response

from challenges.board_cache import board_answer_headers, board_cached
from core.fastlane import LaneRequest, lane_respond

PREFIX = "/web/api/challenges/"
SUFFIX = "/leaderboard"
# DRF's APIView names the allowed methods; the session middleware varies on the cookie.
_HEADERS = ((b"allow", b"GET, HEAD, OPTIONS"), (b"vary", b"Cookie"))
_CONDITIONS = (b"if-none-match", b"if-match", b"if-modified-since", b"if-unmodified-since")


def _default_limit_asked(query: str) -> bool:
    return query in ("", f"limit={settings.LEADERBOARD_DEFAULT_LIMIT}")


def _conditional_status(request: LaneRequest, etag: str) -> int:
    """What Django's `get_conditional_response` answers the request's conditions with the
    board's ETag, as Django's view asks it: 200 (send the board), 304 or 412."""
    if not any(name in request.headers for name in _CONDITIONS):
        return 200
    conditions = HttpRequest()
    conditions.method = request.scope["method"]
    conditions.META = {
        "HTTP_" + name.decode().upper().replace("-", "_"): request.header(name)
        for name in _CONDITIONS
        if name in request.headers
    }
    answer = get_conditional_response(conditions, etag=etag)
    return 200 if answer is None else answer.status_code


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
    status = _conditional_status(request, board.etag)
    if status not in (200, 304):
        return False  # a failed If-Match: Django answers it (412)
    # Only boards anyone may see are stored: the answer is the same for everyone.
    caching = board_answer_headers(etag=board.etag, same_for_everyone=True)
    headers = [
        *_HEADERS,
        *((name.lower().encode(), value.encode()) for name, value in caching.items()),
    ]
    body = board.json if status == 200 else b""
    await lane_respond(request, send, status=status, body=body, headers=headers)
    return True
