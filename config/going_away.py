"""Open websockets are closed with 1001 (going away) when the server is told to stop.

uvicorn, on SIGTERM, closes every open websocket itself with 1012 before the application
hears of the shutdown (its lifespan shutdown comes after the connections are gone, and
tests and benches run with --lifespan off). So the first websocket to arrive chains a
handler in front of the server's own SIGTERM handler: it closes the sockets still open
with 1001, which also hands each consumer its websocket.disconnect, then lets the server
shut down as before. A server that installed no handler of its own (the default action
kills the process at once) is left alone, and so are the test runner's in-process sockets.
"""

import asyncio
import logging
import signal
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)

GOING_AWAY = 1001
# How long the closing frames may take before the server's own shutdown goes ahead.
CLOSE_SECONDS = 1.0


class _Socket:
    def __init__(self, send: Callable, server: "WebsocketsGoAwayOnShutdown") -> None:
        self._send = send
        self._server = server
        self.accepted = False
        self.closed = False

    async def send(self, message: dict) -> None:
        kind = message["type"]
        if self.closed and kind in ("websocket.send", "websocket.close"):
            # Closed for going away: the consumer's pushes until its disconnect are dropped
            # (the server would refuse a frame after the close).
            return
        if kind == "websocket.close":
            self.closed = True
        await self._send(message)
        if kind == "websocket.accept":
            self.accepted = True
            if self._server.going_away:
                await self.go_away()  # accepted while the server was already stopping

    async def go_away(self) -> None:
        if self.accepted and not self.closed:
            self.closed = True
            await self._send({"type": "websocket.close", "code": GOING_AWAY})


class WebsocketsGoAwayOnShutdown:
    """ASGI middleware in front of the websocket routes."""

    def __init__(self, app) -> None:
        self.app = app
        self.sockets: set[_Socket] = set()
        self.going_away = False
        self._watching = False
        self._closing: asyncio.Task | None = None  # held: the loop keeps only a weak reference

    async def __call__(self, scope, receive, send) -> None:
        self._watch_sigterm()
        socket = _Socket(send, self)
        self.sockets.add(socket)
        try:
            await self.app(scope, receive, socket.send)
        finally:
            self.sockets.discard(socket)

    def _watch_sigterm(self) -> None:
        if self._watching or threading.current_thread() is not threading.main_thread():
            return
        self._watching = True
        server_handler = signal.getsignal(signal.SIGTERM)
        if not callable(server_handler):
            return
        loop = asyncio.get_running_loop()

        def on_sigterm(signum, frame) -> None:
            if self.going_away or loop.is_closed():
                server_handler(signum, frame)
                return
            self.going_away = True
            loop.call_soon_threadsafe(start_closing, server_handler, signum)

        def start_closing(server_handler: Callable, signum: int) -> None:
            self._closing = loop.create_task(self._go_away(server_handler, signum))

        signal.signal(signal.SIGTERM, on_sigterm)

    async def _go_away(self, server_handler: Callable, signum: int) -> None:
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                closing = [socket.go_away() for socket in list(self.sockets)]
                for outcome in await asyncio.gather(*closing, return_exceptions=True):
                    if isinstance(outcome, Exception):
                        logger.debug("A socket could not be closed for going away: %r", outcome)
        except TimeoutError:
            logger.warning("Closing websockets for going away took over %s s", CLOSE_SECONDS)
        finally:
            server_handler(signum, None)
