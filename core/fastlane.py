"""Raw ASGI lanes for the few hot paths, in front of Django's request machinery.

Django's async handler runs each sync middleware through a thread hop, so even an empty
async view costs milliseconds of CPU. A lane answers the common, well-formed request of
one path itself — the same status, body and headers Django would give — and hands
everything else to Django untouched (`Lane.to_django`): bad input, other content,
unusual hosts or schemes all get Django's answer, so the lanes add no new error paths.
"""

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from django.conf import settings

from core.django_answer import answer_headers, request_id_header, request_verdict

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]

# How this process's lane calls went, by handler: "<handler>:answered" or ":handed_on".
lane_counts: Counter = Counter()


def headers_as_django_reads(raw: list[tuple[bytes, bytes]]) -> dict[bytes, bytes]:
    """The request's headers as ASGIRequest puts them in META: the values of a repeated
    name joined with commas (a `Host` sent twice is then no allowed host, two
    `Authorization` lines no key), so a lane decides on exactly what Django would."""
    headers: dict[bytes, bytes] = {}
    for name, value in raw:
        headers[name] = headers[name] + b"," + value if name in headers else value
    return headers


@dataclass
class LaneRequest:
    """What a lane reads of an ASGI request; `body` is read at most once."""

    scope: dict[str, Any]
    receive: Callable
    headers: dict[bytes, bytes]
    body: bytes | None = None
    # Whether Django reads the request as HTTPS; set by lane_may_answer.
    secure: bool = False

    def header(self, name: bytes) -> str:
        return self.headers.get(name, b"").decode("latin-1")

    @property
    def query(self) -> str:
        return self.scope.get("query_string", b"").decode("latin-1")


def lane_may_answer(request: LaneRequest) -> bool:
    """Whether Django would serve this request as it is (its host allowed, no HTTPS
    redirect), as Django itself decides it (core/django_answer.py)."""
    verdict = request_verdict(request.scope)
    request.secure = verdict.secure
    return verdict.served


async def lane_respond(
    request: LaneRequest,
    send: Callable,
    *,
    status: int,
    body: bytes = b"",
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Send an answer with what Django's middleware adds to it (core/django_answer.py)."""
    out = [(b"content-length", str(len(body)).encode())]
    if body:
        out.append((b"content-type", b"application/json"))
    out.extend(headers or ())
    out.extend(answer_headers(secure=request.secure, status=status, path=request.scope["path"]))
    out.append(request_id_header(request.headers.get(b"x-request-id")))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})


async def lane_respond_json(
    request: LaneRequest,
    send: Callable,
    data: Any,
    *,
    status: int = 200,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    await lane_respond(request, send, status=status, body=orjson.dumps(data), headers=headers)


async def lane_read_body(request: LaneRequest, *, limit: int | None) -> bytes | None:
    """The whole body when its declared length is at most `limit` bytes (None: no limit,
    as Django reads the setting), else None and nothing read (Django then answers)."""
    declared = request.headers.get(b"content-length")
    if declared is None or not declared.isdigit():
        return None
    if limit is not None and int(declared) > limit:
        return None
    chunks = []
    more = True
    while more:
        message = await request.receive()
        if message["type"] != "http.request":
            return None  # the client left; Django's receive says so again
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    request.body = b"".join(chunks)
    return request.body


class Lane:
    """Routes (method, path) to lane handlers; a handler returns False to pass to Django.

    A handler that read the body hands Django a receive that replays it, so Django sees
    the request exactly as it arrived.
    """

    def __init__(self, django_app: ASGIApp) -> None:
        self.django_app = django_app
        self.routes: dict[tuple[str, str], Callable[..., Awaitable[bool]]] = {}
        self.prefix_routes: list[tuple[str, str, Callable[..., Awaitable[bool]]]] = []

    def route(self, method: str, path: str, handler: Callable[..., Awaitable[bool]]) -> None:
        if path.endswith("*"):
            self.prefix_routes.append((method, path[:-1], handler))
        else:
            self.routes[(method, path)] = handler

    def _handler_for(self, method: str, path: str):
        handler = self.routes.get((method, path))
        if handler is not None:
            return handler
        for route_method, prefix, candidate in self.prefix_routes:
            if method == route_method and path.startswith(prefix):
                return candidate
        return None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        handler = None
        if scope["type"] == "http" and settings.LANES:
            handler = self._handler_for(scope["method"], scope["path"])
        if handler is None:
            await self.django_app(scope, receive, send)
            return
        request = LaneRequest(
            scope=scope, receive=receive, headers=headers_as_django_reads(scope["headers"])
        )
        answered = lane_may_answer(request) and await handler(request, send)
        lane_counts[f"{handler.__name__}:{'answered' if answered else 'handed_on'}"] += 1
        if not answered:
            await self.to_django(request, send)

    async def to_django(self, request: LaneRequest, send: Callable) -> None:
        if request.body is None:
            await self.django_app(request.scope, request.receive, send)
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": request.body, "more_body": False}
            return await request.receive()

        await self.django_app(request.scope, replay, send)
