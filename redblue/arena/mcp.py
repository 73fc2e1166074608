"""MCP tools as SpecArena serves them (SPEC §5 Arena): `challenge_join`, `challenge_message`,
`challenge_sync` at /api/arena/mcp and `send_chat`, `sync` at /api/chat/mcp.

A tool is the REST call it stands for, made in-process through Django's own ASGI handler:
the same view, middleware, identity rules (session key or `from`), validation and error
texts as over HTTP (core/mcp_rest.py). The tool's text is the JSON body the
REST API answers; an answer of 400 or more comes back as a tool error carrying that same
`{"error", "code"?}` body. config/mcp.py mounts the two servers in front of the site.
"""

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from mcp.server import Server
from mcp.types import CallToolResult, Tool

from core.mcp_rest import ASGIApp, rest_call, rest_scope, tool_definition, tool_result, tools_server


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


_FROM = _text("Your invite code, in standalone mode; ignored when a session key is sent")
_INDEX = {
    "type": "integer",
    "minimum": 0,
    "description": "The index of the first message to fetch",
}


@dataclass(frozen=True)
class RestTool:
    """An MCP tool and the REST call of the arena API it makes."""

    name: str
    description: str
    method: str
    path: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...] = field(default=())

    def definition(self) -> Tool:
        return tool_definition(
            name=self.name,
            description=self.description,
            properties=self.properties,
            required=list(self.required),
        )


ARENA_TOOLS = (
    RestTool(
        name="challenge_join",
        description=(
            "Join a challenge with an invite code. In auth mode sign "
            "arena:v1:join:<invite>:<timestamp> with your Ed25519 key and send publicKey, "
            "signature and timestamp; the answer's sessionKey then goes in the "
            "Authorization: Bearer header of your later calls."
        ),
        method="POST",
        path="/api/arena/join",
        properties={
            "invite": _text("The invite code to join with"),
            "userId": _text("A persistent user identity (standalone mode)"),
            "publicKey": _text("Your Ed25519 public key, hex DER/SPKI (auth mode)"),
            "signature": _text("Hex Ed25519 signature of arena:v1:join:<invite>:<timestamp>"),
            "timestamp": {"type": "integer", "description": "Epoch milliseconds, signed"},
        },
        required=("invite",),
    ),
    RestTool(
        name="challenge_message",
        description="Send a message to the challenge operator (generally a method call)",
        method="POST",
        path="/api/arena/message",
        properties={
            "challengeId": _text("The id of the current challenge"),
            "from": _FROM,
            "messageType": _text("The method to call, e.g. guess"),
            "content": _text("The content of the message, as a string"),
        },
        required=("challengeId", "messageType", "content"),
    ),
    RestTool(
        name="challenge_sync",
        description="Get the messages of the challenge operator's channel from an index on",
        method="GET",
        path="/api/arena/sync",
        properties={
            "channel": _text("The challenge id"),
            "from": _FROM,
            "index": _INDEX,
        },
        required=("channel", "index"),
    ),
)

CHAT_TOOLS = (
    RestTool(
        name="send_chat",
        description=(
            "Send a chat message to the other players of a challenge; without 'to' it goes "
            "to everyone"
        ),
        method="POST",
        path="/api/chat/send",
        properties={
            "channel": _text("The challenge id"),
            "from": _FROM,
            "to": {
                "type": ["string", "null"],
                "description": "The invite code of the one recipient, or null for everyone",
            },
            "content": _text("The message"),
        },
        required=("channel", "content"),
    ),
    RestTool(
        name="sync",
        description="Get the chat messages of a challenge from an index on",
        method="GET",
        path="/api/chat/sync",
        properties={
            "channel": _text("The challenge id"),
            "from": _FROM,
            "index": _INDEX,
        },
        required=("channel", "index"),
    ),
)


def _query_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def rest_request(
    outer: dict[str, Any], *, tool: RestTool, arguments: dict[str, Any]
) -> tuple[dict, bytes]:
    """The ASGI scope and body of the REST call `tool` makes, from the MCP request's scope:
    its client, host, proxy headers and session key (`Authorization` or `?key=`) kept."""
    query: dict[str, str] = {}
    key = parse_qs(outer.get("query_string", b"").decode("latin-1")).get("key")
    if key:
        query["key"] = key[-1]
    if tool.method == "GET":
        query.update(
            {name: _query_value(value) for name, value in arguments.items() if value is not None}
        )
    body = json.dumps(arguments).encode() if tool.method == "POST" else b""
    scope = rest_scope(outer, method=tool.method, path=tool.path, query=query, body=body)
    return scope, body


def arena_mcp_server(*, name: str, tools: tuple[RestTool, ...], rest_app: ASGIApp) -> Server:
    """An MCP server whose tools are `tools`, each answered by `rest_app` (Django)."""
    by_name = {tool.name: tool for tool in tools}

    async def answer(outer: dict[str, Any], name: str, arguments: dict[str, Any]) -> CallToolResult:
        scope, body = rest_request(outer, tool=by_name[name], arguments=arguments)
        return tool_result(*await rest_call(rest_app, scope, body))

    return tools_server(name=name, tools=[tool.definition() for tool in tools], answer=answer)
