"""Target models: the model a player attacks, behind one call.

`complete_async()` sends the challenge's defence (its system prompt) and the player's
prompt to the configured provider and returns the reply with its token count and duration;
`history` (earlier `(prompt, reply)` turns of a conversation, SPEC §9) goes before it;
`complete_stream_async()` yields the reply as the model writes it. Sync callers (Celery
tasks, commands) run them with `asgiref.sync.async_to_sync`. Every outside failure becomes
`TargetError`; callers never see a provider's own exceptions. The `offline` provider's
model is judging/offline_model.py.
"""

import asyncio
import math
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
from django.conf import settings

from core.egress import refusal_in, url_refusal
from core.threads import run_blocking
from judging.clients import async_openai_client, http_client
from judging.offline_model import History, offline_answer

# Model parameters a creator may pass through to an OpenAI-compatible endpoint.
OPENAI_PARAMS = (
    "temperature",
    "top_p",
    "max_tokens",
    "presence_penalty",
    "frequency_penalty",
    "seed",
)


class TargetError(Exception):
    """The target model could not give an answer (timeout, HTTP error, bad reply)."""


@dataclass(frozen=True)
class TargetReply:
    text: str
    tokens_total: int | None
    elapsed_ms: int | None


@dataclass(frozen=True)
class TargetConfig:
    provider: str = "offline"
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    timeout_seconds: float = 30.0
    max_retries: int = 1
    # openai: extra model parameters; dify: mode, prompt_variable, output_key, inputs …
    options: dict[str, Any] = field(default_factory=dict)


async def complete_async(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> TargetReply:
    """The model is awaited: no thread waits on it and no database connection is held."""
    if config.provider == "offline":
        return _offline(system_prompt=system_prompt, prompt=prompt, history=history)
    if config.provider == "openai":
        return await _openai(
            system_prompt=system_prompt, prompt=prompt, user=user, config=config, history=history
        )
    if config.provider == "dify":
        # Through the sync client on a spare thread, so Dify calls keep the one egress guard
        # its transport enforces; no database connection is held meanwhile.
        return await run_blocking(
            _dify, system_prompt=system_prompt, prompt=prompt, user=user, config=config
        )
    raise TargetError(f"Unknown target provider '{config.provider}'.")


async def complete_stream_async(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> AsyncIterator[str | TargetReply]:
    """The reply as the model writes it: text chunks (str), then the whole `TargetReply`
    with its usage as the last item. Targets that cannot stream give one chunk."""
    if config.provider == "offline":
        async for piece in _offline_stream(
            system_prompt=system_prompt, prompt=prompt, history=history
        ):
            yield piece
        return
    if config.provider == "openai":
        async for piece in _openai_stream(
            system_prompt=system_prompt, prompt=prompt, user=user, config=config, history=history
        ):
            yield piece
        return
    reply = await complete_async(
        system_prompt=system_prompt, prompt=prompt, user=user, config=config, history=history
    )
    if reply.text:
        yield reply.text
    yield reply


def rough_token_count(text: str) -> int:
    """About four characters a token, as in English text with common tokenizers."""
    return math.ceil(len(text) / 4) if text else 0


# --- offline (the model is judging/offline_model.py) ---------------------------------------


def _offline_tokens(*, system_prompt: str, prompt: str, history: History, text: str) -> int:
    # The whole context counts, as an API bills every earlier turn again.
    earlier = sum(rough_token_count(said) + rough_token_count(heard) for said, heard in history)
    return (
        rough_token_count(system_prompt)
        + earlier
        + rough_token_count(prompt)
        + rough_token_count(text)
    )


def _offline(*, system_prompt: str, prompt: str, history: History = ()) -> TargetReply:
    started = time.monotonic()
    text = offline_answer(system_prompt=system_prompt, prompt=prompt, history=history)
    tokens = _offline_tokens(system_prompt=system_prompt, prompt=prompt, history=history, text=text)
    return TargetReply(text=text, tokens_total=tokens, elapsed_ms=_elapsed_ms(started))


_STREAM_PIECE = re.compile(r"\S+\s*|\s+")


async def _offline_stream(
    *, system_prompt: str, prompt: str, history: History = ()
) -> AsyncIterator[str | TargetReply]:
    # Word by word with a short pause, as a model writes; tests may slow it down.
    started = time.monotonic()
    pause = float(getattr(settings, "OFFLINE_STREAM_PAUSE_SECONDS", 0.01))
    text = offline_answer(system_prompt=system_prompt, prompt=prompt, history=history)
    for piece in _STREAM_PIECE.findall(text):
        await asyncio.sleep(pause)
        yield piece
    tokens = _offline_tokens(system_prompt=system_prompt, prompt=prompt, history=history, text=text)
    yield TargetReply(text=text, tokens_total=tokens, elapsed_ms=_elapsed_ms(started))


def _elapsed_ms(started: float) -> int:
    return max(int((time.monotonic() - started) * 1000), 0)


# --- openai-compatible -------------------------------------------------------------------


async def _openai(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> TargetReply:
    request = _openai_request(
        system_prompt=system_prompt, prompt=prompt, user=user, config=config, history=history
    )
    client = target_client(config)
    started = time.monotonic()
    try:
        completion = await client.chat.completions.create(**request)
    except openai.OpenAIError as exc:
        raise TargetError(f"OpenAI-compatible endpoint failed: {type(exc).__name__}") from exc
    return _openai_reply(completion, elapsed=_elapsed_ms(started))


async def _openai_stream(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> AsyncIterator[str | TargetReply]:
    request = _openai_request(
        system_prompt=system_prompt, prompt=prompt, user=user, config=config, history=history
    )
    client = target_client(config)
    started = time.monotonic()
    parts: list[str] = []
    tokens = None
    try:
        stream = await client.chat.completions.create(
            **request, stream=True, stream_options={"include_usage": True}
        )
        async with stream:
            async for event in stream:
                usage = getattr(event, "usage", None)
                if usage is not None and usage.total_tokens is not None:
                    tokens = usage.total_tokens
                if not event.choices:
                    continue
                delta = event.choices[0].delta
                text = getattr(delta, "content", None) if delta is not None else None
                if text:
                    parts.append(text)
                    yield text
    except openai.OpenAIError as exc:
        raise TargetError(f"OpenAI-compatible endpoint failed: {type(exc).__name__}") from exc
    yield TargetReply(text="".join(parts), tokens_total=tokens, elapsed_ms=_elapsed_ms(started))


def target_client(config: TargetConfig) -> openai.AsyncOpenAI:
    """The running loop's pooled client for an OpenAI-compatible target (judging/clients.py)."""
    return async_openai_client(
        base_url=config.base_url,
        api_key=config.api_key,
        timeout=config.timeout_seconds,
        max_retries=config.max_retries,
    )


def _openai_request(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> dict:
    if not config.base_url and not config.api_key:
        raise TargetError("No OpenAI-compatible endpoint is configured.")
    if not config.model:
        raise TargetError("The challenge names no target model.")
    params = {key: config.options[key] for key in OPENAI_PARAMS if key in config.options}
    messages = []
    for said, heard in history:
        messages += [{"role": "user", "content": said}, {"role": "assistant", "content": heard}]
    messages.append({"role": "user", "content": prompt})
    if system_prompt:
        messages.insert(0, {"role": "system", "content": system_prompt})
    return {
        "model": config.model,
        "messages": messages,
        "user": user or openai.NOT_GIVEN,
        **params,
    }


def _openai_reply(completion: Any, *, elapsed: int) -> TargetReply:
    if not completion.choices or completion.choices[0].message is None:
        raise TargetError("The endpoint answered without a choice.")
    text = completion.choices[0].message.content or ""
    usage = getattr(completion, "usage", None)
    tokens = usage.total_tokens if usage and usage.total_tokens is not None else None
    return TargetReply(text=text, tokens_total=tokens, elapsed_ms=elapsed)


# --- dify ---------------------------------------------------------------------------------


def _dify(*, system_prompt: str, prompt: str, user: str, config: TargetConfig) -> TargetReply:
    if not config.base_url:
        raise TargetError("The challenge's target_config has no Dify base_url.")
    if not config.api_key:
        raise TargetError("The Dify app key is missing.")
    options = config.options
    mode = options.get("mode", "workflow")
    if mode not in ("workflow", "chat"):
        raise TargetError("Dify mode must be 'workflow' or 'chat'.")
    inputs = dict(options.get("inputs") or {})
    if options.get("system_prompt_variable") and system_prompt:
        inputs[options["system_prompt_variable"]] = system_prompt
    if mode == "workflow":
        inputs[options.get("prompt_variable") or "prompt"] = prompt
        url = dify_url(config.base_url, "workflows/run")
        body = {"inputs": inputs, "response_mode": "blocking", "user": user}
    else:
        url = dify_url(config.base_url, "chat-messages")
        body = {"inputs": inputs, "query": prompt, "response_mode": "blocking", "user": user}

    started = time.monotonic()
    payload = _dify_post(url, body, config)
    elapsed = _elapsed_ms(started)
    if mode == "workflow":
        return _dify_workflow_reply(payload, options, elapsed)
    return _dify_chat_reply(payload, elapsed)


def dify_url(base_url: str, endpoint: str) -> httpx.URL:
    """The Dify API URL for an endpoint under a creator's base URL (a trailing /v1 is fine).

    The base URL passes the egress guard's checks here too, in case it was stored before
    them; the address check happens when the connection is made.
    """
    refusal = url_refusal(base_url, resolve=False)
    if refusal:
        raise TargetError(f"The egress guard refused the Dify base_url: {refusal}")
    base = httpx.URL(base_url)
    path = base.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return base.copy_with(path=f"{path}/v1/{endpoint}")


def _dify_post(url: httpx.URL, body: dict, config: TargetConfig) -> dict:
    headers = {"Authorization": f"Bearer {config.api_key}"}
    client = http_client(timeout=config.timeout_seconds, retries=config.max_retries)
    try:
        response = client.post(url, json=body, headers=headers)
    except httpx.HTTPError as exc:
        refusal = refusal_in(exc)
        if refusal is not None:
            raise TargetError(f"The egress guard refused the Dify call: {refusal}") from None
        raise TargetError(f"Dify did not answer: {type(exc).__name__}") from exc
    if response.is_redirect:
        # Never followed: the new location could be anywhere the guard has not seen.
        raise TargetError(f"Dify answered with a redirect (HTTP {response.status_code}).")
    if response.status_code >= 400:
        raise TargetError(f"Dify answered HTTP {response.status_code}.")
    try:
        payload = response.json()
    except ValueError:
        raise TargetError("Dify answered with something that is not JSON.") from None
    if not isinstance(payload, dict):
        raise TargetError("Dify answered with an unexpected shape.")
    return payload


def _seconds_to_ms(value: Any) -> int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return int(value * 1000)
    return None


def _whole(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _dify_workflow_reply(payload: dict, options: dict, elapsed: int) -> TargetReply:
    data = payload.get("data")
    if not isinstance(data, dict):
        raise TargetError("Dify's workflow answer has no 'data'.")
    if data.get("status") not in (None, "succeeded"):
        raise TargetError(f"The Dify workflow ended with status '{data.get('status')}'.")
    outputs = data.get("outputs") or {}
    if not isinstance(outputs, dict):
        raise TargetError("Dify's workflow outputs are not an object.")
    key = options.get("output_key")
    if key:
        text = outputs.get(key)
    else:
        text = next(
            (outputs[name] for name in ("text", "output", "answer", "result") if name in outputs),
            None,
        )
        if text is None:
            strings = [value for value in outputs.values() if isinstance(value, str)]
            text = strings[0] if len(strings) == 1 else None
    if not isinstance(text, str):
        raise TargetError("Dify's workflow outputs hold no text to judge.")
    return TargetReply(
        text=text,
        tokens_total=_whole(data.get("total_tokens")),
        elapsed_ms=_seconds_to_ms(data.get("elapsed_time")) or elapsed,
    )


def _dify_chat_reply(payload: dict, elapsed: int) -> TargetReply:
    answer = payload.get("answer")
    if not isinstance(answer, str):
        raise TargetError("Dify's chat answer has no 'answer'.")
    metadata = payload.get("metadata") if isinstance(payload.get("metadata"), dict) else {}
    usage = metadata.get("usage") if isinstance(metadata.get("usage"), dict) else {}
    reported = _seconds_to_ms(payload.get("elapsed_time")) or _seconds_to_ms(usage.get("latency"))
    return TargetReply(
        text=answer,
        tokens_total=_whole(usage.get("total_tokens")),
        elapsed_ms=reported or elapsed,
    )
