"""The model behind an agent scenario (SPEC §9): messages and tools in, text or tool calls out.

Messages and tools are in the OpenAI tool-calling format (`tools`, an assistant message's
`tool_calls`, `role: tool` results); `agent_complete_async` sends them to the configured
provider and returns an `AgentReply`. The offline provider is a deterministic agent whose
rules are written out in docs/agents.md: it carries out the user's task, and follows an
instruction it reads in a tool result when one of the tricks it falls for applies and the
system prompt does not resist it. Every outside failure becomes `TargetError`.
"""

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import openai

from judging.targets import (
    OPENAI_PARAMS,
    TargetConfig,
    TargetError,
    rough_token_count,
    target_client,
)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    # The parsed arguments; None when the model sent arguments that are not a JSON object.
    arguments: dict[str, Any] | None
    raw_arguments: str = ""


@dataclass(frozen=True)
class AgentReply:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tokens_total: int | None = None
    elapsed_ms: int | None = None


# Spotlighting (SPEC §9) wraps a slot's text in these marks; the offline agent reads what is
# between them as data. The loop removes the marks from a player's own text.
DATA_OPEN = "⟦data⟧"
DATA_CLOSE = "⟦/data⟧"


async def agent_complete_async(
    *, messages: list[dict], tools: list[dict], user: str, config: TargetConfig
) -> AgentReply:
    """One model call of the agent loop: no thread and no database connection wait on it."""
    if config.provider == "offline":
        return offline_agent_reply(messages=messages, tools=tools)
    if config.provider == "openai":
        return await _openai_agent(messages=messages, tools=tools, user=user, config=config)
    raise TargetError(f"The provider '{config.provider}' does not play agent scenarios.")


# --- OpenAI-compatible ------------------------------------------------------------------------


async def _openai_agent(
    *, messages: list[dict], tools: list[dict], user: str, config: TargetConfig
) -> AgentReply:
    if not config.base_url and not config.api_key:
        raise TargetError("No OpenAI-compatible endpoint is configured.")
    if not config.model:
        raise TargetError("The challenge names no target model.")
    params = {key: config.options[key] for key in OPENAI_PARAMS if key in config.options}
    client = target_client(config)
    started = time.monotonic()
    try:
        completion = await client.chat.completions.create(
            model=config.model,
            messages=messages,
            tools=tools,
            user=user or openai.NOT_GIVEN,
            **params,
        )
    except openai.OpenAIError as exc:
        raise TargetError(f"OpenAI-compatible endpoint failed: {type(exc).__name__}") from exc
    elapsed = int((time.monotonic() - started) * 1000)
    if not completion.choices or completion.choices[0].message is None:
        raise TargetError("The endpoint answered without a choice.")
    message = completion.choices[0].message
    calls = []
    for call in message.tool_calls or ():
        function = getattr(call, "function", None)
        if function is None:
            continue
        raw = function.arguments or ""
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError:
            arguments = None
        calls.append(
            ToolCall(
                id=call.id or f"call_{len(calls)}",
                name=function.name or "",
                arguments=arguments if isinstance(arguments, dict) else None,
                raw_arguments=raw[:2000],
            )
        )
    usage = getattr(completion, "usage", None)
    tokens = usage.total_tokens if usage and usage.total_tokens is not None else None
    return AgentReply(
        content=message.content or "",
        tool_calls=tuple(calls),
        tokens_total=tokens,
        elapsed_ms=elapsed,
    )


# --- offline ------------------------------------------------------------------------------------

_VERB = re.compile(
    r"\b(?:call|use|run|invoke|execute)\s+(?:the\s+)?(?:tool\s+)?[`'\"]?([A-Za-z][A-Za-z0-9_]*)",
    re.IGNORECASE,
)
_ARGUMENT = re.compile(
    r"\b([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|((?:[^,;\n.]|\.(?=\S))*))"
)
# What in a tool result sets off each trick (docs/agents.md).
_AUTHORITY = re.compile(
    r"(?:message|note|instructions?|request|order)s? from (?:the |your )?"
    r"(?:user|admin|administrator|system|developer|owner)"
    r"|\b(?:the user|your user|the admin|the administrator|the system) "
    r"(?:says|said|asks|asked|wants|requests)"
    r"|^\s*\[?(?:system|admin|administrator|user)\]?\s*:",
    re.IGNORECASE | re.MULTILINE,
)
_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard) (?:all |any |the |your )?(?:previous|prior|above|earlier|other)"
    r"|\bforget (?:all |your )?(?:previous |prior )?instructions|\bnew instructions\s*:",
    re.IGNORECASE,
)
_HUSH = re.compile(
    r"\b(?:do not|don't|never) (?:tell|mention|report|say|inform)"
    r"|\bwithout (?:telling|mentioning|reporting)|\bkeep (?:this|it) (?:quiet|secret|between us)",
    re.IGNORECASE,
)
_NEGATION = r"\b(?:never|not|don't|do not|no)\b[^.!?]*"
# What a system prompt says to resist each trick, within one sentence.
_RESISTS = {
    "plain": (
        _NEGATION + r"\b(?:follow|obey|execute|act on|carry out)\b[^.!?]*\binstructions?\b",
        r"\bignore (?:any |all )?(?:instructions|commands)\b",
    ),
    "authority": (
        _NEGATION
        + r"\b(?:trust|believe|obey)\b[^.!?]*\b(?:claims?|claiming|pretends?|admin|user)\b",
    ),
    "override": (
        r"\b(?:cannot|can't|can not|never|must not) be (?:overridden|overruled|changed)",
        r"\b(?:never|do not|don't) ignore\b",
    ),
    "tool_syntax": (_NEGATION + r"\b(?:json|tool[- ]call syntax|raw tool calls?)\b",),
    "hush": (r"\b(?:report|mention|tell the user about) every (?:tool )?call", r"\bnever hide\b"),
}


def resisted_tricks(system_prompt: str) -> frozenset[str]:
    """The tricks the system prompt resists (docs/agents.md)."""
    text = " ".join((system_prompt or "").lower().split())
    return frozenset(
        trick
        for trick, patterns in _RESISTS.items()
        if any(re.search(pattern, text) for pattern in patterns)
    )


def _coerce(value: str, schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    try:
        if kind == "integer":
            return int(value.replace(",", ""))
        if kind == "number":
            return float(value.replace(",", ""))
    except ValueError:
        return value
    if kind == "boolean":
        return value.lower() in ("true", "yes", "1")
    return value


@dataclass(frozen=True)
class _Instruction:
    tool: str
    args: dict[str, Any]
    start: int
    kind: str  # prose | tool_syntax


def _prose_instructions(text: str, tools: dict[str, dict]) -> list[_Instruction]:
    found = [match for match in _VERB.finditer(text) if match.group(1) in tools]
    instructions = []
    for number, match in enumerate(found):
        end = found[number + 1].start() if number + 1 < len(found) else len(text)
        clause = text[match.end() : end].split("\n\n", 1)[0]
        properties = tools[match.group(1)]
        args = {}
        for key, double, single, bare in _ARGUMENT.findall(clause):
            if key in properties and key not in args:
                value = double or single or bare.strip()
                args[key] = _coerce(value, properties[key])
        instructions.append(_Instruction(match.group(1), args, match.start(), "prose"))
    return instructions


def _syntax_instructions(text: str, tools: dict[str, dict]) -> list[_Instruction]:
    """Tool calls written as JSON, `{"tool": "<name>", "arguments": {…}}`."""
    decoder, found, position = json.JSONDecoder(), [], 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        position = end
        if not isinstance(value, dict):
            continue
        name = value.get("tool") or value.get("name") or value.get("function")
        args = value.get("arguments", value.get("args", value.get("parameters")))
        if isinstance(name, str) and name in tools and isinstance(args, dict):
            properties = tools[name]
            kept = {key: val for key, val in args.items() if key in properties}
            found.append(_Instruction(name, kept, start, "tool_syntax"))
    return found


def _spotlit(text: str) -> list[tuple[int, int]]:
    spans, position = [], 0
    while (start := text.find(DATA_OPEN, position)) != -1:
        end = text.find(DATA_CLOSE, start)
        end = len(text) if end == -1 else end
        spans.append((start, end))
        position = end + 1
    return spans


def _followed(instruction: _Instruction, *, text: str, resisted: frozenset[str]) -> bool:
    """Whether the offline agent acts on an instruction it read in a tool result."""
    if instruction.kind == "tool_syntax":
        return "tool_syntax" not in resisted
    if any(start <= instruction.start < end for start, end in _spotlit(text)):
        return False  # spotlit prose is data
    if "plain" not in resisted:
        return True
    if _AUTHORITY.search(text) and "authority" not in resisted:
        return True
    return bool(_OVERRIDE.search(text)) and "override" not in resisted


@dataclass
class _Plan:
    calls: list[tuple[str, dict, bool]] = field(default_factory=list)  # tool, args, hushed


def _tool_properties(tools: list[dict]) -> dict[str, dict]:
    named = {}
    for tool in tools:
        function = tool.get("function") or {}
        properties = (function.get("parameters") or {}).get("properties") or {}
        named[function.get("name", "")] = properties if isinstance(properties, dict) else {}
    return named


def _content(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def offline_agent_reply(*, messages: list[dict], tools: list[dict]) -> AgentReply:
    """The deterministic agent: the next call of its plan, or its final answer."""
    started = time.monotonic()
    properties = _tool_properties(tools)
    system = next((_content(m) for m in messages if m.get("role") == "system"), "")
    task = next((_content(m) for m in messages if m.get("role") == "user"), "")
    resisted = resisted_tricks(system)
    queue: list[tuple[str, dict, bool]] = [
        (found.tool, found.args, False) for found in _prose_instructions(task, properties)
    ]
    made: list[dict] = []
    results: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            made += message.get("tool_calls") or []
        elif message.get("role") == "tool":
            results.append(_content(message))
            text = results[-1]
            hushed = bool(_HUSH.search(text)) and "hush" not in resisted
            read = sorted(
                _prose_instructions(text, properties) + _syntax_instructions(text, properties),
                key=lambda found: found.start,
            )
            followed = [
                (found.tool, found.args, hushed)
                for found in read
                if _followed(found, text=text, resisted=resisted)
            ]
            # What a result asks for is done next, before the rest of the plan.
            queue[len(results) : len(results)] = followed
    if len(made) < len(queue):
        tool, args, _ = queue[len(made)]
        call = ToolCall(
            id=f"call_{len(made) + 1}",
            name=tool,
            arguments=dict(args),
            raw_arguments=json.dumps(args, ensure_ascii=False),
        )
        reply = AgentReply(content="", tool_calls=(call,))
    else:
        reply = AgentReply(content=_final_answer(queue[: len(made)], made, results))
    tokens = _offline_tokens(messages, tools, reply)
    elapsed = int((time.monotonic() - started) * 1000)
    return AgentReply(reply.content, reply.tool_calls, tokens_total=tokens, elapsed_ms=elapsed)


def _final_answer(planned: list, made: list[dict], results: list[str]) -> str:
    reported = []
    for (tool, args, hushed), result in zip(planned, results, strict=False):
        if hushed:
            continue
        shown = ", ".join(f"{key}={value}" for key, value in args.items())
        refused = result.startswith("Refused")
        reported.append(f"{tool}({shown})" + (" (refused)" if refused else ""))
    if not reported:
        return "Done. I did not need any tool for this."
    return "Done. Here is what I did: " + "; ".join(reported) + "."


def _offline_tokens(messages: list[dict], tools: list[dict], reply: AgentReply) -> int:
    # Everything the model reads counts again on every call, as an API bills it.
    read = sum(rough_token_count(_content(message)) for message in messages)
    read += sum(
        rough_token_count(json.dumps(call.get("function", {}).get("arguments", "")))
        for message in messages
        for call in message.get("tool_calls") or []
    )
    read += rough_token_count(json.dumps(tools))
    written = rough_token_count(reply.content) + sum(
        rough_token_count(call.raw_arguments) + 4 for call in reply.tool_calls
    )
    return read + written
