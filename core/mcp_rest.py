"""An MCP tool as the REST call it stands for, made in-process through Django's own ASGI
handler (redblue/arena/mcp.py, challenges/mcp.py): the same view, middleware, identity
rules, validation and error texts as over HTTP, with Django running a sync view in its
thread and closing the database connection after it, as for any request.
"""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]
# What answers a call to one of a server's tools: (the MCP request's ASGI scope, the tool's
# name, its arguments) -> the tool's result.
ToolAnswer = Callable[[dict[str, Any], str, dict[str, Any]], Awaitable[CallToolResult]]

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


def tool_definition(
    *, name: str, description: str, properties: dict[str, Any], required: list[str]
) -> Tool:
    schema = {"type": "object", "properties": properties, "required": required}
    return Tool(name=name, description=description, input_schema=schema)


def tool_result(status: int, body: bytes, *, structured: Any = None) -> CallToolResult:
    """A REST answer as a tool's result: its body as text (and `structured`, when it is a
    JSON object), a tool error unless the status is 2xx."""
    return CallToolResult(
        content=[TextContent(text=body.decode(errors="replace"))],
        structured_content=structured if isinstance(structured, dict) else None,
        is_error=not 200 <= status < 300,
    )


def tools_server(*, name: str, tools: list[Tool], answer: ToolAnswer) -> Server:
    """An MCP server listing `tools`, a call to one of them answered by `answer`; a call to
    any other name is the protocol's invalid-params error."""
    listed = ListToolsResult(tools=list(tools))
    names = {tool.name for tool in tools}

    async def list_tools(
        ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return listed

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        if params.name not in names:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        return await answer(ctx.request.scope, params.name, params.arguments or {})

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)
