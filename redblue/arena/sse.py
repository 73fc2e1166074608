"""GET /api/chat/ws/<channel>: the session's messages as Server-Sent Events.

An async view: a listener holds no worker thread, only a coroutine that waits on the
channel layer for a "something changed" ping (with a short poll as fallback, so a layer
that is down only slows the stream) and then reads the new messages, redacted for this
viewer, in a short database call.
"""

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from redblue.arena import selectors
from redblue.arena.api import error, viewer_identity
from redblue.arena.services import ArenaError, arena_group, channel_group, channel_session_id
from redblue.models import ArenaSession

POLL_SECONDS = 2.0


def _event(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload)}\n\n"


def _ended_state(session_id) -> dict[str, Any] | None:
    session = selectors.arena_session(session_id=session_id)
    if session is None or session.status != ArenaSession.Status.ENDED:
        return None
    state = selectors.session_json(session)["state"]
    state["profiles"] = selectors.profiles_for_sessions([session])
    return state


async def _events(*, session_id, channel: str, viewer: str | None) -> AsyncIterator[str]:
    """`session_id` is None for a channel outside every session: no game to end there.

    Each commit's ping carries its new messages (services `_Writer.save`), so a message
    goes out as soon as its ping arrives, one event per message as SpecArena's engine
    sends them, without a database read in between; a ping that shows a gap, a missed
    ping (the poll) or the end of the game reads the database instead."""
    layer = get_channel_layer()
    inbox = await layer.new_channel() if layer else None
    group = arena_group(session_id) if session_id else channel_group(channel)
    # One receiver for the stream's life, never cancelled mid-wait (a cancelled receive of
    # the Redis layer can lose a ping); the loop below takes what it queues.
    pings: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    listener = None
    if inbox:
        await layer.group_add(group, inbox)

        async def listen() -> None:
            while True:
                pings.put_nowait(await layer.receive(inbox))

        listener = asyncio.create_task(listen())
    read = sync_to_async(selectors.channel_messages)

    async def ended(session_id):
        return await sync_to_async(_ended_state)(session_id) if session_id else None

    try:
        messages = await read(channel=channel, viewer=viewer, index=0)
        yield _event({"type": "initial", "messages": messages})
        next_index = messages[-1]["index"] + 1 if messages else 0
        final = await ended(session_id)
        if final is not None:
            yield _event({"type": "game_ended", "data": final})
        revealed = final is not None and channel.startswith(selectors.OPERATOR_PREFIX)
        last_ping = time.monotonic()
        while True:
            wait = min(
                POLL_SECONDS,
                max(0.0, settings.ARENA_SSE_PING_SECONDS - (time.monotonic() - last_ping)),
            )
            ping: dict[str, Any] | None = None
            with contextlib.suppress(TimeoutError):
                ping = await asyncio.wait_for(pings.get(), timeout=wait)
            pushed = [m for m in (ping or {}).get("messages", []) if m["channel"] == channel]
            pushed = [m for m in pushed if m["index"] >= next_index]
            if ping is None or (pushed and pushed[0]["index"] != next_index):
                fresh = await read(channel=channel, viewer=viewer, index=next_index)
            else:
                fresh = [
                    selectors.redacted_for(m, viewer=viewer, revealed=revealed) for m in pushed
                ]
            for message in fresh:
                next_index = message["index"] + 1
                yield _event({"type": "new_message", "message": message})
            if final is None and session_id and (ping is None or ping.get("ended")):
                final = await ended(session_id)
                if final is not None:
                    revealed = channel.startswith(selectors.OPERATOR_PREFIX)
                    yield _event({"type": "game_ended", "data": final})
            if time.monotonic() - last_ping >= settings.ARENA_SSE_PING_SECONDS:
                last_ping = time.monotonic()
                yield ": ping\n\n"
    finally:
        if listener:
            listener.cancel()
        if inbox:
            await layer.group_discard(group, inbox)


async def chat_stream(request: HttpRequest, channel: str) -> HttpResponse:
    """Any channel, as SpecArena streams any: a session's `<id>` or `challenge_<id>`, or a
    channel of its own."""
    if request.method != "GET":
        return error("Method not allowed", status=405, code="METHOD_NOT_ALLOWED")
    try:
        viewer = await sync_to_async(viewer_identity)(request, channel=channel)
    except ArenaError as refusal:
        return error(refusal.message, status=refusal.status, code=refusal.code)
    session_id = await sync_to_async(channel_session_id)(channel)
    response = StreamingHttpResponse(
        _events(session_id=session_id, channel=channel, viewer=viewer),
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache, no-transform"
    response["X-Accel-Buffering"] = "no"
    response["Access-Control-Allow-Origin"] = "*"
    return response
