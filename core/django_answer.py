"""Django's own answer to the checks and headers of a request, for the raw lanes (issue 22).

A lane (core/fastlane.py) answers without Django's middleware, for speed; what that
middleware decides about a request and adds to its answer is not written a second time.
It is asked of Django itself, once per distinct input, and remembered:

- `request_verdict`: whether Django would serve the request as it is, and whether it is
  HTTPS. An `ASGIRequest` built from the request's own host and scheme lines answers
  `get_host()` (ALLOWED_HOSTS, `USE_X_FORWARDED_HOST`/`PORT`) and `is_secure()`
  (`SECURE_PROXY_SSL_HEADER`), and `SecurityMiddleware.process_request` decides the HTTPS
  redirect (`SECURE_SSL_REDIRECT`, `SECURE_REDIRECT_EXEMPT`, `SECURE_SSL_HOST`).
- `answer_headers`: the headers the response middleware of `settings.MIDDLEWARE` puts on
  an answer of that status: SecurityMiddleware (HSTS over HTTPS, nosniff, Referrer-Policy,
  Cross-Origin-Opener-Policy), django-csp (Content-Security-Policy and
  Content-Security-Policy-Report-Only, without a nonce: JSON runs no script) and
  XFrameOptionsMiddleware, run on a response the way Django's handler runs them.
- `request_id_header`: the X-Request-ID `core.middleware.request_id` gives every answer.

Django's path runs the same middleware classes on its own answers, so the two paths differ
only in transport; tests/test_lane_header_parity.py compares whole answers under
production settings. Remembered answers are forgotten when a setting changes (tests).
With `DISALLOWED_USER_AGENTS` or `PREPEND_WWW` set, CommonMiddleware may refuse or
redirect by what the lanes do not read: the lanes then hand every request to Django.
"""

import io
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.core.signals import setting_changed
from django.http import HttpResponse
from django.utils.module_loading import import_string

from core.middleware import request_id_for

# The response middleware whose headers an answer carries, as settings.MIDDLEWARE names
# them; the others add nothing to a lane's kind of answer (a session never read, no CSRF
# cookie, no message) — the parity test checks that claim on whole answers.
_HEADER_MIDDLEWARE = (
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
)
# The request's lines the verdict reads; every other line leaves it unchanged.
_VERDICT_LINES = (b"host", b"x-forwarded-host", b"x-forwarded-port")
_REMEMBERED = 4096


@dataclass(frozen=True)
class Verdict:
    # Django would serve the request as it is (no 400 for its host, no HTTPS redirect).
    served: bool
    secure: bool


def _unused(request):  # the middleware's next step: never called, only its hooks are
    raise AssertionError


def _proxy_line() -> bytes | None:
    header = settings.SECURE_PROXY_SSL_HEADER
    if not header:
        return None
    return header[0].removeprefix("HTTP_").lower().replace("_", "-").encode()


class _DjangoAnswer:
    """Django's middleware, built as its handler builds it, with what it answered."""

    def __init__(self) -> None:
        # Response hooks run in the reverse order of MIDDLEWARE, as Django runs them.
        self.response_middleware = [
            import_string(path)(_unused)
            for path in reversed(settings.MIDDLEWARE)
            if path in _HEADER_MIDDLEWARE
        ]
        security = import_string(_HEADER_MIDDLEWARE[0])
        self.security = next(
            (each for each in self.response_middleware if isinstance(each, security)), None
        )
        self.stands_aside = bool(settings.DISALLOWED_USER_AGENTS or settings.PREPEND_WWW)
        proxy = _proxy_line()
        self.lines = frozenset((*_VERDICT_LINES, proxy) if proxy else _VERDICT_LINES)
        self.verdict = lru_cache(maxsize=_REMEMBERED)(self._verdict)
        self.headers = lru_cache(maxsize=_REMEMBERED)(self._headers)

    def _verdict(self, scheme: str, server, root_path: str, path: str, lines) -> Verdict:
        scope = {
            "type": "http",
            "method": "GET",
            "path": path,
            "root_path": root_path,
            "scheme": scheme,
            "server": server,
            "headers": list(lines),
        }
        request = ASGIRequest(scope, io.BytesIO())
        secure = request.is_secure()
        if self.stands_aside:
            return Verdict(served=False, secure=secure)
        try:
            request.get_host()
        except DisallowedHost:
            return Verdict(served=False, secure=secure)
        redirect = self.security.process_request(request) if self.security else None
        return Verdict(served=redirect is None, secure=secure)

    def _headers(self, secure: bool, status: int, path: str) -> tuple[tuple[bytes, bytes], ...]:
        scope = {
            "type": "http",
            "method": "GET",
            "path": path,
            "scheme": "https" if secure else "http",
            "headers": [],
        }
        request = ASGIRequest(scope, io.BytesIO())
        response = HttpResponse(status=status)
        before = set(response.headers)
        for middleware in self.response_middleware:
            # django-csp readies its nonce on the request (unused: no nonce is sent).
            if hasattr(middleware, "process_request") and middleware is not self.security:
                middleware.process_request(request)
        for middleware in self.response_middleware:
            response = middleware.process_response(request, response)
        return tuple(
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in response.items()
            if name not in before
        )


_current: _DjangoAnswer | None = None


def _django() -> _DjangoAnswer:
    global _current
    if _current is None:
        _current = _DjangoAnswer()
    return _current


def _forget(**kwargs) -> None:
    global _current
    _current = None


setting_changed.connect(_forget, dispatch_uid="core.django_answer")


def request_verdict(scope: dict) -> Verdict:
    """Whether Django would serve this ASGI request as it is, and whether it is HTTPS."""
    django = _django()
    lines = tuple((name, value) for name, value in scope["headers"] if name in django.lines)
    return django.verdict(
        scope.get("scheme", "http"),
        tuple(scope["server"]) if scope.get("server") else None,
        scope.get("root_path", ""),
        scope["path"],
        lines,
    )


def answer_headers(*, secure: bool, status: int, path: str) -> tuple[tuple[bytes, bytes], ...]:
    """The headers Django's response middleware puts on an answer of `status` to `path`."""
    return _django().headers(secure, status, path)


def request_id_header(given: bytes | None) -> tuple[bytes, bytes]:
    """The answer's X-Request-ID, as core.middleware.request_id names every request."""
    value = request_id_for(given.decode("latin-1") if given else "")
    return (b"x-request-id", value.encode())
