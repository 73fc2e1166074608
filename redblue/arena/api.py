"""The SpecArena HTTP API (SPEC §5 Arena), under /api/ and /api/v1/.

Plain Django views: this surface has SpecArena's own error shape `{"error", "code"?}`, not
the DRF one of the rest of the site. Identity is the player's invite code, read from an
HMAC session key (auth mode) or from `from` (standalone mode).
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponseNotAllowed, JsonResponse, QueryDict
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.numbers import QUERY_NUMBER_MAX, NumberRefused, bounded_int
from core.parsers import MAX_JSON_INTEGER, JsonBodyError, json_loads
from redblue.arena import auth, selectors, services
from redblue.arena.services import ArenaError

MAX_LIMIT = 100


def error(message: str, *, status: int = 400, code: str | None = None) -> JsonResponse:
    return JsonResponse(error_fields(message, code=code), status=status)


def error_fields(message: str, *, code: str | None = None) -> dict[str, Any]:
    """SpecArena's error shape: `{"error", "code"?}`."""
    body: dict[str, Any] = {"error": message}
    if code:
        body["code"] = code
    return body


def arena_view(view: Callable) -> Callable:
    """Renders ArenaError as SpecArena's error shape; CSRF does not apply (no cookies)."""

    @csrf_exempt
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs):
        try:
            response = view(request, *args, **kwargs)
        except ArenaError as refusal:
            return error(refusal.message, status=refusal.status, code=refusal.code)
        if isinstance(response, HttpResponseNotAllowed):
            refused = error("Method not allowed", status=405, code="METHOD_NOT_ALLOWED")
            refused["Allow"] = response["Allow"]
            return refused
        return response

    return wrapped


def _body(request: HttpRequest) -> dict[str, Any]:
    try:
        raw = request.body
    except RequestDataTooBig:
        raise ArenaError(
            "The request body is too large.", code="PAYLOAD_TOO_LARGE", status=413
        ) from None
    return body_fields(raw)


def body_fields(raw: bytes) -> dict[str, Any]:
    """A request body as the arena reads it: a JSON object, or nothing at all."""
    if not raw:
        return {}
    try:
        data = json_loads(raw)
    except JsonBodyError as refused:
        raise ArenaError(f"Invalid JSON in request body: {refused}") from None
    if not isinstance(data, dict):
        raise ArenaError("The request body must be a JSON object.")
    return data


def text_field(
    data: dict[str, Any],
    name: str,
    *,
    required: bool = True,
    limit: int = 10_000,
    allow_empty: bool = False,
) -> str:
    value = data.get(name)
    if value is None or (value == "" and not allow_empty):
        if required:
            raise ArenaError(f"{name} is required")
        return ""
    if not isinstance(value, str):
        raise ArenaError(f"{name} must be a string")
    if len(value) > limit:
        raise ArenaError(f"{name} is longer than {limit} characters")
    return value


def _int(
    value: Any, name: str, *, default: int, minimum: int = 0, maximum: int = QUERY_NUMBER_MAX
) -> int:
    try:
        return bounded_int(value, name=name, default=default, minimum=minimum, maximum=maximum)
    except NumberRefused as refused:
        raise ArenaError(str(refused)) from None


def _page(request: HttpRequest, *, default_limit: int = 50) -> tuple[int, int]:
    # A limit beyond the largest page is served as the largest page.
    limit = min(
        _int(request.GET.get("limit"), "limit", default=default_limit, minimum=1), MAX_LIMIT
    )
    return limit, _int(request.GET.get("offset"), "offset", default=0)


def session_key_of(*, authorization: str, query_key: str) -> str:
    """The session key of a request: its `Authorization: Bearer` line, else `?key=`."""
    if authorization.startswith("Bearer "):
        return authorization[7:].strip()
    return query_key


def viewer_identity(
    request: HttpRequest, *, channel: str, body: dict[str, Any] | None = None
) -> str | None:
    def players_of(challenge_id: str) -> list[str] | None:
        session = selectors.arena_session(session_id=challenge_id)
        return None if session is None else session.players

    return identity_of(
        key=session_key_of(
            authorization=request.headers.get("Authorization", ""),
            query_key=request.GET.get("key", ""),
        ),
        claimed=(body or {}).get("from") or request.GET.get("from"),
        channel=channel,
        players_of=players_of,
    )


def identity_of(
    *,
    key: str,
    claimed: Any,
    channel: str,
    players_of: Callable[[str], list[str] | None],
) -> str | None:
    """The identity the caller plays as on `channel` (a session's invite code, or in
    standalone mode whatever `from` says), or None for a viewer.

    A session key is checked against the session the channel names (`<id>` or
    `challenge_<id>`): one that does not verify is refused (401), never silently
    downgraded; one that verifies names the player at that position, if any (the
    session's players as `players_of` reads them). Without a key, `from` (`claimed`) is
    believed only in standalone mode."""
    if key and channel:
        challenge_id = channel.removeprefix(selectors.OPERATOR_PREFIX)
        player_index = auth.session_key_player_index(key=key, challenge_id=challenge_id)
        if player_index is None:
            raise ArenaError("Authentication required", code="AUTH_REQUIRED", status=401)
        players = players_of(challenge_id)
        if players is None or player_index >= len(players):
            return None
        return players[player_index]
    if settings.ARENA_AUTH == "standalone":
        return str(claimed) if claimed else None
    return None


def _required_identity(request: HttpRequest, *, channel: str, body: dict[str, Any]) -> str:
    return required(viewer_identity(request, channel=channel, body=body))


def required(identity: str | None) -> str:
    if not identity:
        # SpecArena's answer in both modes: in auth mode a caller without a valid key is
        # a viewer, and a viewer has no `from`.
        raise ArenaError("from is required")
    return identity


# --- metadata and sessions ---------------------------------------------------------


@arena_view
@require_GET
def metadata_list(request: HttpRequest) -> JsonResponse:
    return JsonResponse(selectors.arena_metadata_all())


@arena_view
@require_GET
def metadata_detail(request: HttpRequest, name: str) -> JsonResponse:
    found = selectors.arena_metadata(name=name)
    if found is None:
        return error("Challenge not found", status=404, code="NOT_FOUND")
    return JsonResponse(found)


def _session_page(
    request: HttpRequest, *, challenge_type: str | None, default_limit: int
) -> JsonResponse:
    status = request.GET.get("status") or None
    if status and status not in ("open", "active", "ended"):
        raise ArenaError("status must be one of open, active, ended")
    limit, offset = _page(request, default_limit=default_limit)
    sessions = selectors.arena_sessions(challenge_type=challenge_type, status=status)
    return _sessions_json(sessions, limit=limit, offset=offset)


def _sessions_json(sessions, *, limit: int, offset: int) -> JsonResponse:
    """One page of sessions as SpecArena's list answers carry them."""
    page = list(sessions[offset : offset + limit])
    return JsonResponse(
        {
            "challenges": [selectors.session_json(session) for session in page],
            "total": sessions.count(),
            "limit": limit,
            "offset": offset,
            "profiles": selectors.profiles_for_sessions(page),
        }
    )


@arena_view
@require_GET
def sessions_list(request: HttpRequest) -> JsonResponse:
    return _session_page(request, challenge_type=None, default_limit=50)


@arena_view
@require_http_methods(["GET", "POST"])
def sessions_of_type(request: HttpRequest, name: str) -> JsonResponse:
    if request.method == "POST":
        session = services.arena_session_create(type_name=name)
        return JsonResponse(selectors.session_json(session))
    return _session_page(request, challenge_type=name, default_limit=10)


# --- playing ----------------------------------------------------------------------


@arena_view
@require_POST
def arena_join(request: HttpRequest) -> JsonResponse:
    body = _body(request)
    invite = text_field(body, "invite", limit=100)
    user_id = joining_user_id(body, invite=invite)
    joined = services.arena_join(invite=invite, user_id=user_id)
    return JsonResponse(
        join_answer(
            session_id=joined.session.pk,
            player_index=joined.player_index,
            info=selectors.arena_metadata(name=joined.session.challenge_type_id),
        )
    )


def joining_user_id(body: dict[str, Any], *, invite: str) -> str:
    """Who joins: in auth mode the key that signed the join (refused unless it verifies),
    in standalone mode the `userId` given, if any."""
    if settings.ARENA_AUTH != "auth":
        return text_field(body, "userId", required=False, limit=128)
    public_key = text_field(body, "publicKey", required=False, limit=1000)
    signature = text_field(body, "signature", required=False, limit=1000)
    timestamp = body.get("timestamp")
    if not public_key or not signature or timestamp in (None, ""):
        raise ArenaError("publicKey, signature, and timestamp are required")
    timestamp = _int(timestamp, "timestamp", default=0, maximum=MAX_JSON_INTEGER)
    try:
        auth.signature_verify(
            public_key_hex=public_key,
            signature_hex=signature,
            timestamp=timestamp,
            message=auth.join_message(invite=invite, timestamp=timestamp),
        )
    except auth.SignatureRefused as refused:
        raise ArenaError(str(refused), status=401, code="INVALID_SIGNATURE") from None
    return auth.user_id_for(public_key)


def join_answer(*, session_id: Any, player_index: int, info: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {"ChallengeID": str(session_id), "ChallengeInfo": info}
    if settings.ARENA_AUTH == "auth":
        answer["sessionKey"] = auth.session_key_for(
            challenge_id=str(session_id), player_index=player_index
        )
    return answer


@dataclass(frozen=True)
class MoveCall:
    challenge_id: str
    content: str
    method: str


def move_call(body: dict[str, Any]) -> MoveCall:
    return MoveCall(
        challenge_id=text_field(body, "challengeId", limit=100),
        content=text_field(body, "content", allow_empty=True),
        method=text_field(body, "messageType", required=False, limit=64),
    )


@arena_view
@require_POST
def arena_message(request: HttpRequest) -> JsonResponse:
    body = _body(request)
    call = move_call(body)
    sender = _required_identity(request, channel=call.challenge_id, body=body)
    session_id = selectors.session_id_of(call.challenge_id)
    if session_id is None:
        raise ArenaError("Challenge not found", code="NOT_FOUND")
    services.arena_message_send(
        session_id=session_id, sender=sender, method=call.method, content=call.content
    )
    return JsonResponse(MESSAGE_SENT)


MESSAGE_SENT = {"ok": "Message sent"}


@dataclass(frozen=True)
class SyncCall:
    named: str  # the channel as the caller named it: the session key is checked on it
    channel: str  # the channel whose messages are read
    index: int


def sync_call(query: QueryDict, *, operator: bool) -> SyncCall:
    named = query.get("channel", "")
    if not named:
        raise ArenaError("channel is required")
    index = _int(query.get("index"), "index", default=0)
    channel = named
    if operator and not channel.startswith(selectors.OPERATOR_PREFIX):
        # arena/sync names the session; its messages are on the operator channel.
        channel = selectors.OPERATOR_PREFIX + channel
    return SyncCall(named=named, channel=channel, index=index)


def sync_answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"messages": messages, "count": len(messages)}


def _sync(request: HttpRequest, *, operator: bool) -> JsonResponse:
    call = sync_call(request.GET, operator=operator)
    viewer = viewer_identity(request, channel=call.named)
    messages = selectors.channel_messages(channel=call.channel, viewer=viewer, index=call.index)
    return JsonResponse(sync_answer(messages))


@arena_view
@require_GET
def arena_sync(request: HttpRequest) -> JsonResponse:
    return _sync(request, operator=True)


@arena_view
@require_POST
def chat_send(request: HttpRequest) -> JsonResponse:
    body = _body(request)
    call = chat_call(body)
    sender = _required_identity(request, channel=call.channel, body=body)
    message = services.arena_channel_send(
        channel=call.channel, sender=sender, content=call.content, to=call.to
    )
    return JsonResponse(chat_answer(call, sender=sender, index=message.index))


@dataclass(frozen=True)
class ChatCall:
    channel: str
    content: str
    to: str


def chat_call(body: dict[str, Any]) -> ChatCall:
    return ChatCall(
        channel=text_field(body, "channel", limit=100),
        content=text_field(body, "content", allow_empty=True),
        to=text_field(body, "to", required=False, limit=128),
    )


def chat_answer(call: ChatCall, *, sender: str, index: int) -> dict[str, Any]:
    return {"index": index, "channel": call.channel, "from": sender, "to": call.to or None}


@arena_view
@require_GET
def chat_sync(request: HttpRequest) -> JsonResponse:
    return _sync(request, operator=False)


# --- invites ----------------------------------------------------------------------


def _free_invite_session(invite: str):
    session = selectors.arena_session_by_invite(invite=invite)
    if session is None:
        raise ArenaError(f"Challenge not found for invite: {invite}", code="NOT_FOUND", status=404)
    if invite in session.players:
        raise ArenaError(f"Invite already used: {invite}", code="INVITE_ALREADY_USED", status=409)
    return session


@arena_view
@require_GET
def invite_detail(request: HttpRequest, invite: str) -> JsonResponse:
    return JsonResponse(selectors.session_json(_free_invite_session(invite)))


@arena_view
@require_POST
def invite_claim(request: HttpRequest) -> JsonResponse:
    body = _body(request)
    _free_invite_session(text_field(body, "inviteId", limit=100))
    return JsonResponse({"success": True})


# --- scoring, stats, users ---------------------------------------------------------


@arena_view
@require_GET
def scoring_global(request: HttpRequest) -> JsonResponse:
    limit, offset = _page(request, default_limit=MAX_LIMIT)
    return JsonResponse(selectors.scoring_global(limit=limit, offset=offset), safe=False)


@arena_view
@require_GET
def scoring_of_type(request: HttpRequest, name: str) -> JsonResponse:
    if selectors.arena_metadata(name=name) is None:
        return error("Unknown challenge type", status=404, code="NOT_FOUND")
    limit, _ = _page(request, default_limit=MAX_LIMIT)
    return JsonResponse(selectors.scoring_for_type(challenge_type=name, limit=limit))


@arena_view
@require_GET
def stats(request: HttpRequest) -> JsonResponse:
    return JsonResponse(selectors.arena_stats())


@arena_view
@require_http_methods(["GET", "POST"])
def users(request: HttpRequest) -> JsonResponse:
    if request.method == "POST":
        return _user_update(request)
    # SpecArena answers a bare list; `limit` (default and most 100) and `offset` page it.
    limit, offset = _page(request, default_limit=MAX_LIMIT)
    page = selectors.arena_users()[offset : offset + limit]
    return JsonResponse([selectors.profile_json(user) for user in page], safe=False)


def _user_update(request: HttpRequest) -> JsonResponse:
    body = _body(request)
    username = body.get("username")
    model = body.get("model")
    for name, value in (("username", username), ("model", model)):
        if value is not None and not isinstance(value, str):
            raise ArenaError(f"{name} must be a string")
    if settings.ARENA_AUTH == "auth":
        public_key = text_field(body, "publicKey", required=False, limit=1000)
        signature = text_field(body, "signature", required=False, limit=1000)
        if not public_key or not signature or body.get("timestamp") in (None, ""):
            raise ArenaError("publicKey, signature, and timestamp are required")
        timestamp = _int(body.get("timestamp"), "timestamp", default=0, maximum=MAX_JSON_INTEGER)
        try:
            auth.signature_verify(
                public_key_hex=public_key,
                signature_hex=signature,
                timestamp=timestamp,
                message=auth.user_update_message(timestamp=timestamp),
            )
        except auth.SignatureRefused as refused:
            return error(str(refused), status=401, code="INVALID_SIGNATURE")
        user_id = auth.user_id_for(public_key)
    else:
        user_id = text_field(body, "userId", required=False, limit=128) or str(
            body.get("from") or ""
        )
        if not user_id:
            raise ArenaError("userId is required")
    user = services.arena_user_update(user_id=user_id, username=username, model=model)
    return JsonResponse(selectors.profile_json(user))


@arena_view
@require_GET
def users_batch(request: HttpRequest) -> JsonResponse:
    raw = request.GET.get("ids")
    if raw is None:
        raise ArenaError("ids query parameter is required")
    ids = [part for part in raw.split(",") if part][:MAX_LIMIT]
    return JsonResponse(selectors.arena_profiles(user_ids=ids))


@arena_view
@require_GET
def user_detail(request: HttpRequest, user_id: str) -> JsonResponse:
    user = selectors.arena_user(user_id=user_id)
    if user is None:
        return error("User not found", status=404, code="NOT_FOUND")
    return JsonResponse(selectors.profile_json(user))


@arena_view
@require_GET
def user_sessions(request: HttpRequest, user_id: str) -> JsonResponse:
    limit, offset = _page(request)
    sessions = selectors.arena_user_sessions(user_id=user_id)
    return _sessions_json(sessions, limit=limit, offset=offset)


@arena_view
@require_GET
def user_scores(request: HttpRequest, user_id: str) -> JsonResponse:
    return JsonResponse(selectors.scoring_for_player(user_id=user_id))


@arena_view
def not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    return error("Not found", status=404, code="NOT_FOUND")
