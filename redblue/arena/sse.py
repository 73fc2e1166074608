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
from redblue.arena.services import ArenaError, arena_group
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
    layer = get_channel_layer()
    inbox = await layer.new_channel() if layer else None
    if inbox:
        await layer.group_add(arena_group(session_id), inbox)
    read = sync_to_async(selectors.channel_messages)
    ended = sync_to_async(_ended_state)
    try:
        messages = await read(channel=channel, viewer=viewer, index=0)
        yield _event({"type": "initial", "messages": messages})
        next_index = messages[-1]["index"] + 1 if messages else 0
        final = await ended(session_id)
        if final is not None:
            yield _event({"type": "game_ended", "data": final})
        last_ping = time.monotonic()
        while True:
            wait = min(
                POLL_SECONDS,
                max(0.0, settings.ARENA_SSE_PING_SECONDS - (time.monotonic() - last_ping)),
            )
            if inbox:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(layer.receive(inbox), timeout=wait)
            else:
                await asyncio.sleep(wait)
            for message in await read(channel=channel, viewer=viewer, index=next_index):
                next_index = message["index"] + 1
                yield _event({"type": "new_message", "message": message})
            if final is None:
                final = await ended(session_id)
                if final is not None:
                    yield _event({"type": "game_ended", "data": final})
            if time.monotonic() - last_ping >= settings.ARENA_SSE_PING_SECONDS:
                last_ping = time.monotonic()
                yield ": ping\n\n"
    finally:
        if inbox:
            await layer.group_discard(arena_group(session_id), inbox)


async def chat_stream(request: HttpRequest, channel: str) -> HttpResponse:
    if request.method != "GET":
        return error("Method not allowed", status=405, code="METHOD_NOT_ALLOWED")
    session_id = selectors.session_id_of(channel)
    if session_id is None or not await sync_to_async(selectors.arena_session)(
        session_id=session_id
    ):
        return error("Challenge not found", status=404, code="NOT_FOUND")
    try:
        viewer = await sync_to_async(viewer_identity)(request, channel=channel)
    except ArenaError as refusal:
        return error(refusal.message, status=refusal.status, code=refusal.code)
    name = channel if channel.startswith(selectors.OPERATOR_PREFIX) else str(session_id)
    response = StreamingHttpResponse(
        _events(session_id=session_id, channel=name, viewer=viewer),
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache, no-transform"
    response["X-Accel-Buffering"] = "no"
    response["Access-Control-Allow-Origin"] = "*"
    return response
