"""The MCP endpoints served in front of the site: the arena's (redblue/arena/mcp.py) at the
paths SpecArena serves them, /api/arena/mcp and /api/chat/mcp and the same under /api/v1/;
and the players' and agents' (challenges/mcp.py) at /mcp/challenges, outside /api/, whose
/api/challenges/{name} is SpecArena's (SPEC §9 Agents).

Streamable HTTP, stateless and answering in JSON: any worker of any machine answers any
call, and no stream outlives its request. The SDK's session managers need a running task
group: the ASGI lifespan starts it and stops it within STOP_SECONDS; a server run with
`--lifespan off` (the tests', the benches') starts it at its first MCP request and ends it
with the event loop. A request whose host Django would refuse, or redirect to HTTPS, is
handed to Django for Django's answer.
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable

from django.conf import settings
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_REQUEST

from challenges.mcp import challenges_mcp_server
from core.fastlane import LaneRequest, headers_as_django_reads, lane_may_answer
from redblue.arena.mcp import ARENA_TOOLS, CHAT_TOOLS, RestTool, arena_mcp_server

logger = logging.getLogger(__name__)

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]

ENDPOINTS = {
    "/api/arena/mcp": "arena",
    "/api/v1/arena/mcp": "arena",
    "/api/chat/mcp": "chat",
    "/api/v1/chat/mcp": "chat",
    "/mcp/challenges": "challenges",
}
# How long the lifespan's shutdown waits for the managers before cancelling them.
STOP_SECONDS = 2.0


class _Running:
    """The session managers of one event loop, running in a task of their own."""

    def __init__(self, rest_app: ASGIApp) -> None:
        self.managers = {
            "arena": _manager("arena", ARENA_TOOLS, rest_app),
            "chat": _manager("chat", CHAT_TOOLS, rest_app),
            "challenges": _stateless(challenges_mcp_server(rest_app=rest_app)),
        }
        self.loop = asyncio.get_running_loop()
        self.ready = asyncio.Event()
        self.stopping = asyncio.Event()
        self.task = self.loop.create_task(self._run())

    async def _run(self) -> None:
        async with contextlib.AsyncExitStack() as stack:
            for manager in self.managers.values():
                await stack.enter_async_context(manager.run())
            self.ready.set()
            await self.stopping.wait()

    async def started(self) -> None:
        if self.ready.is_set():
            return
        waiting = asyncio.ensure_future(self.ready.wait())
        await asyncio.wait({waiting, self.task}, return_when=asyncio.FIRST_COMPLETED)
        if not self.ready.is_set():
            waiting.cancel()
            self.task.result()  # raises what stopped the managers from starting
            raise RuntimeError("The MCP session managers stopped before they started")

    async def stop(self) -> None:
        self.stopping.set()
        try:
            async with asyncio.timeout(STOP_SECONDS):
                await asyncio.shield(self.task)
        except TimeoutError:
            logger.warning("The MCP session managers took over %s s to stop", STOP_SECONDS)
            self.task.cancel()


def _manager(
    name: str, tools: tuple[RestTool, ...], rest_app: ASGIApp
) -> StreamableHTTPSessionManager:
    return _stateless(
        arena_mcp_server(name=f"prompt-challenges-{name}", tools=tools, rest_app=rest_app)
    )


def _stateless(server) -> StreamableHTTPSessionManager:
    return StreamableHTTPSessionManager(
        app=server,
        stateless=True,
        json_response=True,
        # The host is checked as Django checks it (ALLOWED_HOSTS), before the SDK sees it.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    )


async def _no_stream(send: Callable) -> None:
    """A stateless server sends nothing outside a call's answer: the spec's 405 for the GET
    stream (the SDK would hold it open, unused, until the server stops)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": INVALID_REQUEST, "message": "Method Not Allowed: no GET stream"},
        }
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"allow", b"POST, DELETE")]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": 405, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpInFrontOf:
    """ASGI app: the MCP endpoints, everything else to `app`; also the lifespan."""

    def __init__(self, app: ASGIApp, *, rest_app: ASGIApp) -> None:
        self.app = app
        self.rest_app = rest_app
        self._running: _Running | None = None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(scope, receive, send)
            return
        endpoint = ENDPOINTS.get(scope["path"])
        if endpoint is None or not self._served_here(scope, receive):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "GET":
            await _no_stream(send)
            return
        running = await self.start()
        await running.managers[endpoint].handle_request(scope, receive, send)

    @staticmethod
    def _served_here(scope: dict, receive: Callable) -> bool:
        request = LaneRequest(scope, receive, headers_as_django_reads(scope["headers"]))
        return lane_may_answer(request)

    async def start(self) -> _Running:
        running = self._running
        if running is None or running.loop is not asyncio.get_running_loop():
            running = self._running = _Running(self.rest_app)
        await running.started()
        return running

    async def lifespan(self, scope: dict, receive: Callable, send: Callable) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as failure:
                    logger.exception("The MCP session managers did not start")
                    await send({"type": "lifespan.startup.failed", "message": str(failure)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._running is not None:
                    await self._running.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return
