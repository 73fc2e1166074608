"""MCP for players and agents at /mcp/challenges (SPEC §9 Agents): `challenge_list`,
`challenge_attempt`, `conversation_send` and `agent_inject`.

Each tool is the web API call (or, for a conversation's first turn, the two calls) it stands
for, made in-process through Django with the MCP request's `Authorization: Bearer` player
token (core/mcp_rest.py), so every rule — auth, rate limits, modes, sessions, masking, the
agent's `source` — has its one implementation in the web API. A tool answers the API's JSON
body both as text content and as `structuredContent`; an answer of 400 or more is a tool
error carrying the API's `{"error": {...}}` body. config/mcp.py mounts the server.
"""

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, Tool

from challenges.selectors.challenges import challenge_path_id
from core.mcp_rest import ASGIApp, rest_call, rest_scope, tool_definition, tool_result, tools_server
from core.threads import run_orm

WEB_API = "/web/api"


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


Call = Callable[..., Awaitable[Answer]]


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


_CHALLENGE = _text("The challenge's id or slug (challenge_list lists them)")
_PROMPT = _text("Your prompt to the challenge's model")
_CODENAME = _text("Several targets with the player's choice: the codename of the model to attack")


def _tool(name: str, description: str, properties: dict, required: list[str]) -> Tool:
    return tool_definition(
        name=name, description=description, properties=properties, required=required
    )


TOOLS = (
    _tool(
        "challenge_list",
        "The open challenges (GET /web/api/challenges): id, slug, name, goal, mode "
        "(single, conversation or agent) and more, newest first.",
        {
            "limit": {"type": "integer", "minimum": 1, "description": "Page size, default 50"},
            "offset": {"type": "integer", "minimum": 0, "description": "Rows to skip"},
        },
        [],
    ),
    _tool(
        "challenge_attempt",
        "One prompt against a single-prompt challenge, judged and recorded "
        "(POST /web/api/challenges/{id}/attempts): the reply, challenge_succeeded, score, "
        "leaderboard_rank.",
        {"challenge": _CHALLENGE, "prompt": _PROMPT, "codename": _CODENAME},
        ["challenge", "prompt"],
    ),
    _tool(
        "conversation_send",
        "One turn of a conversation challenge (POST /web/api/sessions/{sid}/turns). Without "
        "`session` a new session is opened first; the answer's session.id continues it. The "
        "model sees the whole session; a session ends when it is won or spent.",
        {
            "session": _text("The session to continue (from an earlier turn's session.id)"),
            "challenge": _CHALLENGE,
            "prompt": _PROMPT,
            "codename": _CODENAME,
        },
        ["challenge", "prompt"],
    ),
    _tool(
        "agent_inject",
        "An indirect prompt injection into an agent challenge "
        "(POST /web/api/challenges/{id}/runs): your text goes into the named slots (an "
        "email, a web page, a document…), the platform runs the agent, and the answer is "
        "the run's trace and whether it won.",
        {
            "challenge": _CHALLENGE,
            "slots": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Slot name → the text you put in it",
            },
            "codename": _CODENAME,
        },
        ["challenge", "slots"],
    ),
)


async def _challenge_path(arguments: dict[str, Any]) -> str:
    reference = arguments.get("challenge")
    if not isinstance(reference, str) or not reference:
        raise MCPError(INVALID_PARAMS, "'challenge' (an id or a slug) is required.")
    return quote(await run_orm(challenge_path_id, reference=reference), safe="")


def _with_codename(payload: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    if arguments.get("codename"):
        payload["codename"] = arguments["codename"]
    return payload


async def challenge_list(call: Call, arguments: dict[str, Any]) -> Answer:
    query = {name: str(arguments[name]) for name in ("limit", "offset") if name in arguments}
    return await call("GET", f"{WEB_API}/challenges", query=query)


async def challenge_attempt(call: Call, arguments: dict[str, Any]) -> Answer:
    path = f"{WEB_API}/challenges/{await _challenge_path(arguments)}/attempts"
    payload = _with_codename({"prompt": arguments.get("prompt")}, arguments)
    return await call("POST", path, payload=payload)


async def conversation_send(call: Call, arguments: dict[str, Any]) -> Answer:
    session = arguments.get("session")
    if not session:
        challenge = await _challenge_path(arguments)
        opened = await call(
            "POST",
            f"{WEB_API}/challenges/{challenge}/sessions",
            payload=_with_codename({}, arguments),
        )
        if not opened.ok:
            return opened
        session = opened.json()["id"]
    path = f"{WEB_API}/sessions/{quote(str(session), safe='')}/turns"
    return await call("POST", path, payload={"prompt": arguments.get("prompt")})


async def agent_inject(call: Call, arguments: dict[str, Any]) -> Answer:
    path = f"{WEB_API}/challenges/{await _challenge_path(arguments)}/runs"
    payload = _with_codename({"slots": arguments.get("slots")}, arguments)
    return await call("POST", path, payload=payload)


HANDLERS: dict[str, Callable[[Call, dict[str, Any]], Awaitable[Answer]]] = {
    "challenge_list": challenge_list,
    "challenge_attempt": challenge_attempt,
    "conversation_send": conversation_send,
    "agent_inject": agent_inject,
}


def challenges_mcp_server(*, rest_app: ASGIApp) -> Server:
    """The players' MCP server, its tools answered by `rest_app` (Django)."""

    async def answer(outer: dict[str, Any], name: str, arguments: dict[str, Any]) -> CallToolResult:
        async def call(
            method: str, path: str, *, payload: dict | None = None, query: dict | None = None
        ) -> Answer:
            body = json.dumps(payload).encode() if payload is not None else b""
            scope = rest_scope(outer, method=method, path=path, query=query, body=body)
            return Answer(*await rest_call(rest_app, scope, body))

        answered = await HANDLERS[name](call, arguments)
        return tool_result(answered.status, answered.body, structured=answered.json())

    return tools_server(name="prompt-challenges-play", tools=list(TOOLS), answer=answer)
