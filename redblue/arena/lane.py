"""The raw lanes of the arena's play calls (core/fastlane.py), under /api/ and /api/v1/.

`POST challenges/<type>`, `POST arena/join`, `POST arena/message`, `GET arena/sync`,
`POST chat/send` (on a session's chat channel) and `GET chat/sync`: the well-formed call
is answered here with what Django's view answers, in at most two statements — one read
of the session with its row version (`xmin`), skipped when this worker wrote the session
last, and one write conditional on that version — and one push to the live group. The
rules are not here: parsing, identity and answers are api.py's, the game's changes
moves.py's, the reads' shapes selectors.py's. Every refusal,
every rare case and every call that changed the session between our read and our write
(after a few tries) is handed to Django, whose path answers it under the row lock: a bad
body, a bad key, a chat on an operator or free channel, an unknown type. A move the
operator refuses (the call is kept all the same) or that ends a game of identified players
(their profiles classify it, the scoring strategies score it) is made by the service
itself, `services.arena_message_send` on a thread, without Django's request machinery.

Per process, the lane keeps each challenge type's row (its options decide a new
session; the statement creating a session re-checks it and a mismatch drops it) and each
session as it last wrote it (every write re-checks the version and the type's row, and
answers the session as it now is when they changed).
"""

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import psycopg
from django.conf import settings
from django.http import QueryDict
from django.utils import timezone
from psycopg.types.json import Jsonb

from core.aio_clients import (
    pg_fetch,
    pg_pool,
    postgres_in_use,
    postgres_outage_begins,
    postgres_refuse_while_down,
    postgres_unavailable,
)
from core.errors import ApplicationError, error_body
from core.fastlane import Lane, LaneRequest, lane_read_body, lane_respond_json
from core.outages import postgres_unreachable
from core.threads import run_orm_pooled
from notifications.live import group_send_async
from redblue.arena import api, moves, selectors, services
from redblue.arena.registry import arena_types
from redblue.arena.services import arena_group, game_ending_record, session_changed_ping
from redblue.models import (
    ArenaChallengeType,
    ArenaInvite,
    ArenaMessage,
    ArenaSession,
    ArenaUser,
)

logger = logging.getLogger(__name__)

PREFIXES = ("/api/", "/api/v1/")
# Reads and writes of a session another call changed in between, before Django's path
# (which waits on the row lock) takes over.
ATTEMPTS = 4

_SESSION = ArenaSession._meta.db_table
_TYPE = ArenaChallengeType._meta.db_table
_INVITE = ArenaInvite._meta.db_table
_MESSAGE = ArenaMessage._meta.db_table
_USER = ArenaUser._meta.db_table

_CACHE_SIZE = 20_000


class _Bounded(OrderedDict):
    """A cache that forgets its oldest entries past _CACHE_SIZE."""

    def remember(self, key, value):
        self[key] = value
        self.move_to_end(key)
        if len(self) > _CACHE_SIZE:
            self.popitem(last=False)
        return value


# The type rows a new session is made from, by name (ArenaChallengeType, never saved).
_types: dict[str, ArenaChallengeType] = {}
# Sessions as this worker last wrote them (the row, with its version), by id, and the
# session each of their invites belongs to: a change starts from the row kept, and its
# statement writes only if that is still the row's version (else it answers the row).
_sessions: _Bounded = _Bounded()
_invite_sessions: _Bounded = _Bounded()


def lane_caches_clear() -> None:
    _types.clear()
    _sessions.clear()
    _invite_sessions.clear()


def arena_lanes(lane: Lane) -> None:
    for prefix in PREFIXES:
        lane.route("POST", prefix + "challenges/*", session_create_lane)
        lane.route("POST", prefix + "arena/join", join_lane)
        lane.route("POST", prefix + "arena/message", message_lane)
        lane.route("GET", prefix + "arena/sync", arena_sync_lane)
        lane.route("POST", prefix + "chat/send", chat_send_lane)
        lane.route("GET", prefix + "chat/sync", chat_sync_lane)


class _HandOn(Exception):
    """Django's path answers this call (nothing was written)."""


class _ByService(Exception):
    """The move is the service's to make under the row lock (services.arena_message_send,
    on a thread): an operator's refusal (the call is kept), an ending to score."""


async def _served(request: LaneRequest, send, work) -> bool:
    """Run `work()` (its answer's JSON), answer it, or hand the call on to Django."""
    if not postgres_in_use():
        return False
    try:
        answer = await work()
    except (_HandOn, _ByService, api.ArenaError):
        return False
    except _Refused as refused:
        await lane_respond_json(
            request,
            send,
            api.error_fields(refused.error.message, code=refused.error.code),
            status=refused.error.status,
        )
        return True
    except psycopg.Error as error:
        if not postgres_unreachable(error):
            raise
        unavailable = postgres_unavailable()
        await lane_respond_json(
            request,
            send,
            error_body(code=unavailable.code, message=unavailable.message),
            status=unavailable.status,
            headers=[(b"retry-after", unavailable.headers["Retry-After"].encode())],
        )
        return True
    except ApplicationError:
        return False
    await lane_respond_json(request, send, answer)
    return True


async def _body(request: LaneRequest) -> dict[str, Any]:
    raw = await lane_read_body(request, limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    if raw is None:
        raise _HandOn
    return api.body_fields(raw)


def _query(request: LaneRequest) -> QueryDict:
    return QueryDict(request.query)


def _session_key(request: LaneRequest, query: QueryDict) -> str:
    return api.session_key_of(
        authorization=request.header(b"authorization"), query_key=query.get("key", "")
    )


# --- reading and writing a session ---------------------------------------------------

_SESSION_COLUMNS = (
    "s.id, s.name, s.challenge_type_id, s.created_at, s.completed_at, s.status, s.invites, "
    "s.players, s.player_identities, s.scores, s.attributions, s.game_state, "
    "s.game_category, s.operator_next_index, s.chat_next_index, s.xmin::text, "
    "t.metadata, t.options, t.enabled"
)
_SESSION_READ = (
    f"SELECT {_SESSION_COLUMNS} FROM {_SESSION} s JOIN {_TYPE} t "  # noqa: S608
    "ON t.name = s.challenge_type_id WHERE s.id = %s"
)
_SESSION_OF_INVITE_READ = (
    f"SELECT {_SESSION_COLUMNS} FROM {_INVITE} i JOIN {_SESSION} s ON s.id = i.session_id "  # noqa: S608
    f"JOIN {_TYPE} t ON t.name = s.challenge_type_id WHERE i.code = %s"
)


class _Read:
    """A session as read, with its row version and its type."""

    def __init__(self, row: tuple) -> None:
        (
            session_id,
            name,
            type_name,
            created_at,
            completed_at,
            status,
            invites,
            players,
            identities,
            scores,
            attributions,
            game_state,
            game_category,
            operator_next_index,
            chat_next_index,
            self.version,
            metadata,
            options,
            enabled,
        ) = row
        self.type_row = ArenaChallengeType(
            name=type_name, metadata=metadata, options=options, enabled=enabled
        )
        self.session = ArenaSession(
            id=session_id,
            name=name,
            challenge_type=self.type_row,
            created_at=created_at,
            completed_at=completed_at,
            status=status,
            invites=invites,
            players=players,
            player_identities=identities,
            scores=scores,
            attributions=attributions,
            game_state=game_state,
            game_category=game_category,
            operator_next_index=operator_next_index,
            chat_next_index=chat_next_index,
        )

    def operator(self):
        if self.type_row.name not in arena_types():
            raise _HandOn
        return moves.operator_for(type_name=self.type_row.name, options=self.type_row.options)


async def _read_row(query: str, key: Any) -> tuple:
    rows = await pg_fetch(query, (key,))
    if not rows:
        raise _HandOn
    return rows[0]


def _remember(session: ArenaSession, *, version: str, type_row: ArenaChallengeType) -> None:
    """The session as this worker just wrote it, in the columns `_Read` takes."""
    _sessions.remember(
        session.pk,
        (
            session.pk,
            session.name,
            type_row.name,
            session.created_at,
            session.completed_at,
            session.status,
            session.invites,
            session.players,
            session.player_identities,
            session.scores,
            session.attributions,
            session.game_state,
            session.game_category,
            session.operator_next_index,
            session.chat_next_index,
            version,
            type_row.metadata,
            type_row.options,
            type_row.enabled,
        ),
    )
    for invite in session.invites:
        _invite_sessions.remember(invite, session.pk)


def _write_statement(*, claim: bool) -> str:
    """The change's one statement: the session's fields if its row is still the version
    read (and its type's row still what was read with it), its new messages, and for a
    join the invite's claim and the player's profile. Answers the row's new version, or
    when the session had changed, the session as it now is (for the next try)."""
    claimable = (
        f" AND EXISTS (SELECT 1 FROM {_INVITE} WHERE code = %(invite)s AND player_index IS NULL)"  # noqa: S608
        if claim
        else ""
    )
    claimed = (
        f""", claimed AS (
            UPDATE {_INVITE} SET player_index = %(player_index)s, user_id = %(user_id)s,
                joined_at = %(now)s
            WHERE code = %(invite)s AND player_index IS NULL AND EXISTS (SELECT 1 FROM changed)
            RETURNING 1
        ), profile AS (
            INSERT INTO {_USER} (user_id, username, model, is_benchmark, account_id,
                created_at, updated_at)
            SELECT %(user_id)s, '', '', false, NULL, %(now)s, %(now)s
            WHERE %(user_id)s <> '' AND EXISTS (SELECT 1 FROM changed)
            ON CONFLICT (user_id) DO NOTHING
            RETURNING 1
        )"""  # noqa: S608
        if claim
        else ""
    )
    return f"""
        WITH changed AS (
            UPDATE {_SESSION} SET status = %(status)s, completed_at = %(completed_at)s,
                players = %(players)s, player_identities = %(identities)s,
                scores = %(scores)s, attributions = %(attributions)s,
                game_state = %(game_state)s, game_category = %(game_category)s,
                operator_next_index = %(operator_next_index)s,
                chat_next_index = %(chat_next_index)s
            WHERE id = %(id)s AND xmin::text = %(version)s{claimable}
                AND EXISTS (SELECT 1 FROM {_TYPE} WHERE name = %(type)s
                    AND options = %(options)s AND metadata = %(metadata)s
                    AND enabled = %(enabled)s)
            RETURNING id, xmin::text AS version
        ), m AS (
            INSERT INTO {_MESSAGE} (session_id, channel, "index", sender, recipient, content,
                message_type, timestamp_ms)
            SELECT changed.id, m.* FROM changed, unnest(%(channels)s::text[],
                %(indexes)s::int[], %(senders)s::text[], %(recipients)s::text[],
                %(contents)s::text[], %(types)s::text[], %(stamps)s::bigint[]) AS m
            RETURNING 1
        ){claimed}
        SELECT (SELECT version FROM changed), now_as_is.*
        FROM (SELECT 1) AS one LEFT JOIN LATERAL (
            SELECT {_SESSION_COLUMNS} FROM {_SESSION} s
            JOIN {_TYPE} t ON t.name = s.challenge_type_id
            WHERE s.id = %(id)s AND NOT EXISTS (SELECT 1 FROM changed)
        ) AS now_as_is ON true
    """  # noqa: S608


_WRITE = _write_statement(claim=False)
_WRITE_CLAIMING = _write_statement(claim=True)


def _jsonb(value: Any) -> Jsonb:
    return Jsonb(value, dumps=json.dumps)


def _session_fields(session: ArenaSession) -> dict[str, Any]:
    """The statement parameters of the session's fields a change may set."""
    return {
        "id": session.pk,
        "status": session.status,
        "completed_at": session.completed_at,
        "players": _jsonb(session.players),
        "identities": _jsonb(session.player_identities),
        "scores": _jsonb(session.scores),
        "attributions": _jsonb(session.attributions),
        "game_state": _jsonb(session.game_state),
        "game_category": session.game_category,
        "operator_next_index": session.operator_next_index,
        "chat_next_index": session.chat_next_index,
    }


async def _write(
    read: _Read, change: moves.SessionChange, **claim: Any
) -> tuple[str | None, tuple | None]:
    """Write the change if the session is still the version read: (its new version,
    None), or (None, the session as it now is, None if it is gone)."""
    session = change.session
    messages = change.messages
    parameters = {
        **_session_fields(session),
        "version": read.version,
        "type": read.type_row.name,
        "options": _jsonb(read.type_row.options),
        "metadata": _jsonb(read.type_row.metadata),
        "enabled": read.type_row.enabled,
        "channels": [message.channel for message in messages],
        "indexes": [message.index for message in messages],
        "senders": [message.sender for message in messages],
        "recipients": [message.recipient for message in messages],
        "contents": [message.content for message in messages],
        "types": [message.message_type for message in messages],
        "stamps": [message.timestamp_ms for message in messages],
        **claim,
    }
    version, *now_as_is = (await _execute_once(_WRITE_CLAIMING if claim else _WRITE, parameters))[0]
    if version is None:
        return None, tuple(now_as_is) if now_as_is[0] is not None else None
    await group_send_async(
        group=arena_group(session.pk), message=session_changed_ping(session, change.payloads())
    )
    return version, None


async def _execute_once(query: str, parameters: Any) -> list[tuple]:
    """One write, sent once: a statement that may have been applied is never resent (its
    version check would fail, and the call would be applied again on a new read)."""
    postgres_refuse_while_down()
    try:
        pool = await pg_pool()
        async with pool.connection() as connection:
            cursor = await connection.execute(query, parameters)
            return await cursor.fetchall()
    except psycopg.Error as error:
        if postgres_unreachable(error):
            postgres_outage_begins()
        raise


class _Refused(Exception):
    """The service refused a move after keeping the call: answered as Django would."""

    def __init__(self, error: api.ArenaError) -> None:
        super().__init__(error.message)
        self.error = error


def _ending_recorded(change: moves.SessionChange) -> None:
    """A game's end is recorded here only when that needs no database (no identified
    players: nobody to classify or score); otherwise by the service."""
    if change.ended_now:
        if change.ending_needs_database():
            raise _ByService
        game_ending_record(change.session)


async def _changed(
    read_query: str, key: Any, apply: Callable, claim: Callable | None = None, *, known: Any
) -> tuple[_Read, Any]:
    """Apply (`apply(read) -> (change, result)`) to the session as this worker last wrote
    it (`known`: its id) or as read, and write it; again on the session as it now is when
    another call changed it in between. `claim(read, result)`: a join's invite claim."""
    row = _sessions.get(known) if known is not None else None
    for _ in range(ATTEMPTS):
        if row is None:
            row = await _read_row(read_query, key)
        read = _Read(row)
        change, result = apply(read)
        _ending_recorded(change)
        version, now_as_is = await _write(read, change, **(claim(read, result) if claim else {}))
        if version is not None:
            _remember(change.session, version=version, type_row=read.type_row)
            return read, result
        _sessions.pop(read.session.pk, None)
        # The statement's own snapshot may still show the version it could not update.
        row = now_as_is if now_as_is is not None and now_as_is[15] != read.version else None
        await asyncio.sleep(0)
    raise _HandOn


# --- the calls -----------------------------------------------------------------------


async def session_create_lane(request: LaneRequest, send) -> bool:
    """POST challenges/<type>: a new session of a known, enabled type."""
    name = request.scope["path"].rpartition("/challenges/")[2]
    if not name or "/" in name or name not in arena_types():
        return False

    async def work() -> dict[str, Any]:
        type_row = await _type_row(name)
        session, invites = moves.session_new(type_row=type_row)
        rows = await _execute_once(
            f"""
            WITH t AS (
                SELECT name FROM {_TYPE}
                WHERE name = %(type)s AND enabled AND options = %(options)s
            ), s AS (
                INSERT INTO {_SESSION} (id, name, challenge_type_id, created_at, status,
                    invites, players, player_identities, scores, attributions, game_state,
                    game_category, operator_next_index, chat_next_index)
                SELECT %(id)s, %(name)s, t.name, %(created_at)s, %(status)s, %(invites)s,
                    %(players)s, %(identities)s, %(scores)s, %(attributions)s,
                    %(game_state)s, %(game_category)s, %(operator_next_index)s,
                    %(chat_next_index)s
                FROM t
                RETURNING id, xmin::text AS version
            ), i AS (
                INSERT INTO {_INVITE} (code, session_id, position, user_id)
                SELECT i.code, s.id, i.position, '' FROM s,
                    unnest(%(codes)s::text[], %(positions)s::int[]) AS i(code, position)
                RETURNING 1
            )
            SELECT version FROM s
            """,  # noqa: S608
            {
                **_session_fields(session),
                "type": name,
                "options": _jsonb(type_row.options),
                "name": session.name,
                "created_at": session.created_at,
                "invites": _jsonb(session.invites),
                "codes": [invite.code for invite in invites],
                "positions": [invite.position for invite in invites],
            },
        )
        if not rows:
            _types.pop(name, None)  # changed or gone: Django's path reads it afresh
            raise _HandOn
        _remember(session, version=rows[0][0], type_row=type_row)
        return selectors.session_json(session)

    return await _served(request, send, work)


async def _type_row(name: str) -> ArenaChallengeType:
    found = _types.get(name)
    if found is None:
        rows = await pg_fetch(
            f"SELECT metadata, options, enabled FROM {_TYPE} WHERE name = %s",  # noqa: S608
            (name,),
        )
        if not rows:
            raise _HandOn  # Django's path installs the type's row
        metadata, options, enabled = rows[0]
        found = _types[name] = ArenaChallengeType(
            name=name, metadata=metadata, options=options, enabled=enabled
        )
    return found


async def join_lane(request: LaneRequest, send) -> bool:
    async def work() -> dict[str, Any]:
        body = await _body(request)
        invite = api.text_field(body, "invite", limit=100)
        user_id = api.joining_user_id(body, invite=invite)

        def join(read: _Read):
            return moves.join_apply(read.session, read.operator(), invite=invite, user_id=user_id)

        def claim(read: _Read, player_index: int) -> dict[str, Any]:
            return {
                "invite": invite,
                "player_index": player_index,
                "user_id": user_id,
                "now": timezone.now(),
            }

        read, player_index = await _changed(
            _SESSION_OF_INVITE_READ, invite, join, claim=claim, known=_invite_sessions.get(invite)
        )
        return api.join_answer(
            session_id=read.session.pk,
            player_index=player_index,
            info=selectors.type_metadata(arena_types()[read.type_row.name], read.type_row),
        )

    return await _served(request, send, work)


async def message_lane(request: LaneRequest, send) -> bool:
    async def work() -> dict[str, Any]:
        body = await _body(request)
        call = api.move_call(body)
        session_id = selectors.session_id_of(call.challenge_id)
        if session_id is None:
            raise _HandOn
        query = _query(request)
        key = _session_key(request, query)
        claimed = body.get("from") or query.get("from")
        senders = []

        def move(read: _Read):
            sender = _player(read, key=key, claimed=claimed, channel=call.challenge_id)
            senders.append(sender)
            change, refusal = moves.move_apply(
                read.session,
                read.operator(),
                sender=sender,
                method=call.method,
                content=call.content,
            )
            if refusal is not None:
                raise _ByService
            return change, None

        try:
            await _changed(_SESSION_READ, session_id, move, known=session_id)
        except _ByService:
            try:
                await run_orm_pooled(
                    services.arena_message_send,
                    session_id=session_id,
                    sender=senders[-1],
                    method=call.method,
                    content=call.content,
                )
            except api.ArenaError as error:
                raise _Refused(error) from None
        return api.MESSAGE_SENT

    return await _served(request, send, work)


def _player(read: _Read, *, key: str, claimed: Any, channel: str) -> str:
    return api.required(
        api.identity_of(
            key=key,
            claimed=claimed,
            channel=channel,
            players_of=lambda _: read.session.players,
        )
    )


async def chat_send_lane(request: LaneRequest, send) -> bool:
    """chat/send on a session's chat channel (`<id>`); other channels go to Django."""

    async def work() -> dict[str, Any]:
        body = await _body(request)
        call = api.chat_call(body)
        if call.channel.startswith(moves.OPERATOR_PREFIX):
            raise _HandOn
        session_id = selectors.session_id_of(call.channel)
        if session_id is None:
            raise _HandOn
        query = _query(request)
        key = _session_key(request, query)
        claimed = body.get("from") or query.get("from")

        def chat(read: _Read):
            sender = _player(read, key=key, claimed=claimed, channel=call.channel)
            change, message = moves.chat_apply(
                read.session, read.operator(), sender=sender, content=call.content, to=call.to
            )
            return change, (sender, message.index)

        _, (sender, index) = await _changed(_SESSION_READ, session_id, chat, known=session_id)
        return api.chat_answer(call, sender=sender, index=index)

    return await _served(request, send, work)


_SYNC_READ = f"""
    SELECT s.status, s.players, m.channel, m."index", m.sender, m.recipient, m.content,
        m.message_type, m.timestamp_ms
    FROM (SELECT 1) AS one
    LEFT JOIN {_SESSION} s ON s.id = %(session)s
    LEFT JOIN {_MESSAGE} m ON m.channel = %(channel)s AND m."index" >= %(index)s
    ORDER BY m."index"
"""  # noqa: S608


async def _sync(request: LaneRequest, send, *, operator: bool) -> bool:
    async def work() -> dict[str, Any]:
        query = _query(request)
        call = api.sync_call(query, operator=operator)
        session_id = selectors.session_id_of(call.named)
        rows = await pg_fetch(
            _SYNC_READ, {"session": session_id, "channel": call.channel, "index": call.index}
        )
        status, players = rows[0][0], rows[0][1]
        viewer = api.identity_of(
            key=_session_key(request, query),
            claimed=query.get("from"),
            channel=call.named,
            players_of=lambda _: players,
        )
        revealed = selectors.channel_revealed_when(channel=call.channel, status=status)
        messages = [
            selectors.redacted_for(
                moves.payload_of(
                    channel=channel,
                    index=index,
                    sender=sender,
                    recipient=recipient,
                    content=content,
                    message_type=message_type,
                    timestamp_ms=timestamp_ms,
                ),
                viewer=viewer,
                revealed=revealed,
            )
            for (
                _,
                _,
                channel,
                index,
                sender,
                recipient,
                content,
                message_type,
                timestamp_ms,
            ) in rows
            if channel is not None
        ]
        return api.sync_answer(messages)

    return await _served(request, send, work)


async def arena_sync_lane(request: LaneRequest, send) -> bool:
    return await _sync(request, send, operator=True)


async def chat_sync_lane(request: LaneRequest, send) -> bool:
    return await _sync(request, send, operator=False)
