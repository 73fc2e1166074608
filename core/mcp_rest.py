"""An MCP tool as the REST call it stands for, made in-process through Django's own ASGI
handler (redblue/arena/mcp.py, challenges/mcp.py): the same view, middleware, identity
rules, validation and error texts as over HTTP, with Django running a sync view in its
thread and closing the database connection after it, as for any request.
"""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]

# What the MCP request carries about its own transport, not about the call it makes; the
# cookie goes too, so a tool is authenticated by its Bearer token alone (no CSRF to skip).
_TRANSPORT_HEADERS = frozenset(
    {b"content-type", b"content-length", b"accept", b"cookie", b"last-event-id"}
)


def rest_scope(
    outer: dict[str, Any],
    *,
    method: str,
    path: str,
    query: dict[str, str] | None = None,
    body: bytes = b"",
) -> dict:
    """The ASGI scope of a REST call made on behalf of the MCP request whose scope is
    `outer`: its client, host, proxy headers and `Authorization` kept."""
    headers = [(name, value) for name, value in outer["headers"] if name not in _TRANSPORT_HEADERS]
    headers.append((b"content-length", str(len(body)).encode()))
    if method != "GET":
        headers.append((b"content-type", b"application/json"))
    return {
        **outer,
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": urlencode(query or {}).encode(),
        "headers": headers,
    }


async def rest_call(app: ASGIApp, scope: dict, body: bytes) -> tuple[int, bytes]:
    """Status and body of `app`'s answer to one request, served in this process."""
    answer: dict[str, Any] = {"status": 500, "body": b""}
    delivered = False

    async def receive() -> dict:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        # The caller stays connected until Django, having answered, stops listening.
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return answer["status"], answer["body"]
