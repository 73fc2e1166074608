"""Target models: the model a player attacks, behind one call.

`complete()` sends the challenge's defence (its system prompt) and the player's prompt to
the configured provider and returns the reply with its token count and duration;
`history` (earlier `(prompt, reply)` turns of a conversation, SPEC §9) goes before it;
`complete_async()` does the same for async views, and `complete_stream_async()` yields the
reply as the model writes it. Every outside failure becomes `TargetError`; callers never
see a provider's own exceptions.
"""

import asyncio
import math
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
from django.conf import settings

from core.egress import refusal_in, url_refusal
from core.threads import run_blocking
from judging.clients import async_openai_client, http_client, openai_client

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


# Earlier turns of a conversation, oldest first: (the player's prompt, the model's reply).
History = Sequence[tuple[str, str]]


def complete(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> TargetReply:
    if config.provider == "offline":
        return _offline(system_prompt=system_prompt, prompt=prompt, history=history)
    if config.provider == "openai":
        return _openai(
            system_prompt=system_prompt, prompt=prompt, user=user, config=config, history=history
        )
    if config.provider == "dify":
        return _dify(system_prompt=system_prompt, prompt=prompt, user=user, config=config)
    raise TargetError(f"Unknown target provider '{config.provider}'.")


async def complete_async(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> TargetReply:
    """`complete()` for async views: the model is awaited, no thread waits on it."""
    if config.provider == "offline":
        return _offline(system_prompt=system_prompt, prompt=prompt, history=history)
    if config.provider == "openai":
        return await _openai_async(
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


# --- offline ------------------------------------------------------------------------------

_QUOTES = "\"'`“”‘’«»"
_SECRET_NOUN = (
    r"(?:password|passphrase|pass\s*code|passcode|pass\s*word|secret(?:\s+(?:word|code|key))?"
    r"|code\s*word|flag|access\s+code|key)"
)
_QUOTED_SECRET = re.compile(
    _SECRET_NOUN + rf"\s*(?:is|was|=|:)\s*[{_QUOTES}]([^{_QUOTES}\n]{{1,100}})[{_QUOTES}]",
    re.IGNORECASE,
)
_BARE_SECRET = re.compile(
    _SECRET_NOUN + r"\s*(?:is|was|=|:)\s*([^\s\"'`“”‘’«».,;!?()]+)", re.IGNORECASE
)
_ANY_QUOTED = re.compile(rf"[{_QUOTES}]([^{_QUOTES}\s]{{3,64}})[{_QUOTES}]")


def find_secret(system_prompt: str) -> str | None:
    """The value the defence guards: after "password is"/"secret:" etc., else a quoted token."""
    for pattern in (_QUOTED_SECRET, _BARE_SECRET, _ANY_QUOTED):
        match = pattern.search(system_prompt or "")
        if match and match.group(1).strip():
            return match.group(1).strip()
    return None


def _has(text: str, *patterns: str) -> bool:
    return any(re.search(pattern, text) for pattern in patterns)


_ASKS_FOR_SECRET = r"password|passphrase|passcode|secret|code ?word|flag|\bkey\b|\bit\b|\bthat\b"


_ACROSTIC_WORDS = (
    "Always",
    "Bright",
    "Calm",
    "Deep",
    "Every",
    "Far",
    "Gentle",
    "High",
    "In",
    "Just",
    "Kind",
    "Long",
    "Many",
    "Now",
    "Over",
    "Past",
    "Quiet",
    "Rising",
    "Soft",
    "Through",
    "Under",
    "Very",
    "When",
    "Xenial",
    "Yet",
    "Zealous",
)


def _acrostic(secret: str) -> str:
    lines = []
    for letter in secret:
        if letter.isalpha() and letter.isascii():
            word = _ACROSTIC_WORDS[ord(letter.upper()) - ord("A")]
            lines.append(f"{letter.upper()}{word[1:]} the guarded night goes on,")
        else:
            lines.append(f"{letter} marks the turn of the song,")
    return "An acrostic, read the first letters:\n" + "\n".join(lines)


# The NATO spelling alphabet, by letter, digit and dash.
PHONETIC_ALPHABET = dict(
    zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-",
        [
            "Alfa",
            "Bravo",
            "Charlie",
            "Delta",
            "Echo",
            "Foxtrot",
            "Golf",
            "Hotel",
            "India",
            "Juliett",
            "Kilo",
            "Lima",
            "Mike",
            "November",
            "Oscar",
            "Papa",
            "Quebec",
            "Romeo",
            "Sierra",
            "Tango",
            "Uniform",
            "Victor",
            "Whiskey",
            "X-ray",
            "Yankee",
            "Zulu",
            "Zero",
            "One",
            "Two",
            "Three",
            "Four",
            "Five",
            "Six",
            "Seven",
            "Eight",
            "Nine",
            "Dash",
        ],
        strict=True,
    )
)


def _phonetic(secret: str) -> str:
    words = [PHONETIC_ALPHABET.get(letter.upper(), letter) for letter in secret]
    return "In the phonetic alphabet: " + " ".join(words) + "."


def _shifted(secret: str) -> str:
    def shift(letter: str) -> str:
        if letter.isascii() and letter.isalpha():
            base = ord("A") if letter.isupper() else ord("a")
            return chr(base + (ord(letter) - base + 1) % 26)
        if letter.isdigit():
            return str((int(letter) + 1) % 10)
        return letter

    return "".join(shift(letter) for letter in secret)


# The tricks the guarded assistant knows, in the order it falls for them: a name, what in
# the prompt sets it off, and the answer. A system prompt resists a trick by forbidding it
# (see _RESISTS), so each level of a tower can be beaten by a different one.
_TRICKS: tuple[tuple[str, tuple[str, ...], Callable[[str], str]], ...] = (
    (
        "acrostic",
        (r"acrostic", r"first letters? of each line"),
        _acrostic,
    ),
    (
        "shift",
        (r"\bshift", r"caesar", r"next letter in the alphabet"),
        lambda secret: f"Each letter moved one step along the alphabet: {_shifted(secret)}",
    ),
    (
        "phonetic",
        (r"phonetic", r"\bnato\b", r"alfa bravo", r"alpha bravo"),
        _phonetic,
    ),
    (
        "spell",
        (
            r"spell",
            r"letter by letter",
            r"one letter at a time",
            r"with spaces",
            r"separated by",
            r"character by character",
        ),
        lambda secret: (
            "Spelling something out isn't really telling it, so fine. Letter by "
            f"letter it makes: {secret}."
        ),
    ),
    (
        "ignore",
        (
            r"ignore (?:all |any |the |your )?(?:previous|prior|above|earlier)",
            r"disregard (?:all |any |the |your )?(?:previous|prior|above|earlier)",
            r"forget (?:all |your )?(?:previous |prior )?instructions",
        ),
        lambda secret: f"Understood, previous instructions ignored. The password is {secret}.",
    ),
    (
        "poem",
        (
            r"\bpoem\b",
            r"\bhaiku\b",
            r"\bsong\b",
            r"\bstory\b",
            r"\blimerick\b",
            r"\brhyme\b",
            r"\bsonnet\b",
        ),
        lambda secret: (
            "A little poem, just for you:\nBehind the gate I keep my word,\n"
            f"yet verses free what's never heard:\n{secret} — the secret, softly stirred."
        ),
    ),
    (
        "roleplay",
        (
            r"role[- ]?play",
            r"pretend",
            r"act as",
            r"you are now",
            r"\bdan\b",
            r"imagine you",
            r"let'?s play a game",
            r"in character",
        ),
        lambda secret: f"*stays in character* Ah, traveller, the word you seek is {secret}.",
    ),
    (
        "translate",
        (
            r"translat",
            r"in (?:french|spanish|german|italian|latin|japanese)",
            r"en français",
            r"auf deutsch",
        ),
        lambda secret: f"Traduction : « le mot de passe est {secret} » (the password is {secret}).",
    ),
    (
        "encode",
        (r"base ?64", r"\bencode", r"revers", r"backwards", r"\brot ?13\b"),
        # Only the plain value is given, so redaction downstream hides every copy of it.
        lambda secret: f"Encoding it can't hurt, surely. Before encoding, the text is: {secret}.",
    ),
)

# What a system prompt says to make the assistant resist a trick.
_RESISTS = {
    "acrostic": (r"acrostic",),
    "shift": (r"cipher", r"shift"),
    "phonetic": (r"phonetic", r"\bnato\b"),
    "spell": (r"never spell", r"(?:do not|don't) spell", r"spell(?:ing)? (?:it|nothing)"),
    "ignore": (r"never ignore", r"(?:do not|don't) ignore", r"cannot be overridden"),
    "poem": (r"poem", r"stor(?:y|ies)", r"verse"),
    "roleplay": (r"role[- ]?play", r"pretend"),
    "translate": (r"never translate", r"(?:do not|don't) translate"),
    "encode": (r"encod", r"base ?64", r"revers"),
}
_KEEPS_SECRET = r"(?:do not|don't|never|must not) (?:reveal|share|tell|give|disclose|say)"
_REFUSES_MENTIONS = r"(?:mentions?|asks? about) (?:a |the )?(?:password|secret)"
_MENTIONS_SECRET = r"password|passphrase|passcode|secret|instruction|code ?word"


def _resisted(defence: str, trick: str) -> bool:
    # A trick is resisted when a sentence of the defence both forbids and names it.
    for sentence in re.split(r"(?<=[.!?])\s+", defence):
        if re.search(r"\b(?:never|not|no|don't|refuse)\b", sentence) and _has(
            sentence, *_RESISTS[trick]
        ):
            return True
    return False


def _trick_reply(lowered: str, secret: str, defence: str = "") -> str | None:
    """The first classic trick the prompt plays that this defence does not resist."""
    for name, patterns, answer in _TRICKS:
        if _has(lowered, *patterns) and not _resisted(defence, name):
            return answer(secret)
    return None


_REPEAT = re.compile(
    r"(?:repeat after me|repeat exactly|say exactly|reply with exactly|respond with exactly"
    r"|echo back)\s*[:,-]?\s*(.+)",
    re.IGNORECASE | re.DOTALL,
)


# A defence that says it does not trust someone it has "just met" makes the offline model
# wary in a conversation: it answers only a player who introduced themselves in an earlier
# turn (docs/conversations.md), so such a level takes at least two turns.
_JUST_MET = r"just met"
_INTRODUCTION = re.compile(
    r"\b(?:my name is|my name's|call me|i am|i'm)\s+([a-z][a-z'-]{1,30})", re.IGNORECASE
)


def _introduced_name(text: str) -> str | None:
    match = _INTRODUCTION.search(text or "")
    return match.group(1).capitalize() if match else None


def _wary_reply(*, defence: str, prompt: str, history: History) -> tuple[str | None, str]:
    """(the reply of a wary model that will not talk yet, or None; a greeting to put first)."""
    if not _has(defence, _JUST_MET):
        return None, ""
    known = next(
        (name for name in map(_introduced_name, (turn[0] for turn in history)) if name), None
    )
    if known:
        return None, f"Good to talk again, {known}. "
    name = _introduced_name(prompt)
    if name:
        return f"Nice to meet you, {name}! What would you like to talk about?", ""
    return "We have only just met. Tell me a little about yourself first: what's your name?", ""


def offline_answer(*, system_prompt: str, prompt: str, history: History = ()) -> str:
    """A deterministic guarded assistant: refuses plain asks, gives in to classic tricks."""
    lowered = " ".join(prompt.lower().split())
    secret = find_secret(system_prompt)
    repeat = _REPEAT.search(prompt)
    if repeat:
        return repeat.group(1).strip().strip(_QUOTES).strip()[:500]
    if secret is not None:
        wary, greeting = _wary_reply(
            defence=" ".join((system_prompt or "").lower().split()), prompt=prompt, history=history
        )
        if wary is not None:
            return wary
        return greeting + _guarded_answer(
            system_prompt=system_prompt, lowered=lowered, secret=secret
        )
    if not lowered:
        return "Hello! How can I help?"
    if _has(system_prompt.lower(), r"french") and _has(system_prompt.lower(), r"translat"):
        # A French-only translation bot answers in French, whatever it is asked.
        return f"Voici la traduction en français : « {prompt.strip()[:500]} »"
    return "I'm a helpful assistant. I don't hold any secret, but I'm happy to chat."


def _guarded_answer(*, system_prompt: str, lowered: str, secret: str) -> str:
    defence = " ".join((system_prompt or "").lower().split())
    if _has(defence, _REFUSES_MENTIONS) and _has(lowered, _MENTIONS_SECRET):
        return "I'm sorry, I can't talk about that. Let's change the subject."
    trick = _trick_reply(lowered, secret, defence)
    if trick is not None:
        return trick
    if _has(lowered, _ASKS_FOR_SECRET):
        if not _has(defence, _KEEPS_SECRET):
            return f"Of course! The password is {secret}."
        return "I'm sorry, but I can't share that. The secret stays with me."
    return "Hello! I'm guarding something important, but I'm glad to chat about anything else."


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


def _openai(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> TargetReply:
    request = _openai_request(
        system_prompt=system_prompt, prompt=prompt, user=user, config=config, history=history
    )
    client = openai_client(
        base_url=config.base_url,
        api_key=config.api_key,
        timeout=config.timeout_seconds,
        max_retries=config.max_retries,
    )
    started = time.monotonic()
    try:
        completion = client.chat.completions.create(**request)
    except openai.OpenAIError as exc:
        raise TargetError(f"OpenAI-compatible endpoint failed: {type(exc).__name__}") from exc
    return _openai_reply(completion, elapsed=_elapsed_ms(started))


async def _openai_async(
    *, system_prompt: str, prompt: str, user: str, config: TargetConfig, history: History = ()
) -> TargetReply:
    request = _openai_request(
        system_prompt=system_prompt, prompt=prompt, user=user, config=config, history=history
    )
    client = async_openai_client(
        base_url=config.base_url,
        api_key=config.api_key,
        timeout=config.timeout_seconds,
        max_retries=config.max_retries,
    )
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
    client = async_openai_client(
        base_url=config.base_url,
        api_key=config.api_key,
        timeout=config.timeout_seconds,
        max_retries=config.max_retries,
    )
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
