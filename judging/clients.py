"""One HTTP client per process and endpoint, so model calls reuse pooled connections.

A client per call paid a TCP (and TLS) handshake every time and left the pool unused.
The httpx client is safe to share between threads; an async openai client belongs to
the event loop that made it.
"""

import asyncio
import threading
import weakref
from functools import lru_cache

import httpx
import openai

from core.egress import guarded_client

# Local OpenAI-compatible servers (Ollama, vLLM) need no key, but the client insists on one.
PLACEHOLDER_API_KEY = "not-needed"


# An async client's pooled connections belong to the event loop that opened them, so
# there is one client per loop (under ASGI: one per process).
_async_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict]" = (
    weakref.WeakKeyDictionary()
)
_async_lock = threading.Lock()


def async_openai_client(
    *, base_url: str, api_key: str, timeout: float, max_retries: int
) -> openai.AsyncOpenAI:
    """The AsyncOpenAI client for the running event loop; call it inside a coroutine."""
    loop = asyncio.get_running_loop()
    key = (base_url, api_key, float(timeout), int(max_retries))
    with _async_lock:
        clients = _async_clients.setdefault(loop, {})
        if key not in clients:
            clients[key] = openai.AsyncOpenAI(
                base_url=base_url or "https://api.openai.com/v1",
                api_key=api_key or PLACEHOLDER_API_KEY,
                timeout=timeout,
                max_retries=max_retries,
            )
        return clients[key]


def http_client(*, timeout: float, retries: int) -> httpx.Client:
    """A pooled httpx client for creator-set URLs: every connection passes the egress guard,
    redirects are not followed; `retries` re-tries failed connections only, never a request.
    """
    return _http_client(float(timeout), int(retries))


@lru_cache(maxsize=16)
def _http_client(timeout: float, retries: int) -> httpx.Client:
    return guarded_client(timeout=timeout, retries=retries)
