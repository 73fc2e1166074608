"""Request checks that every view relies on, before any view or database sees the request,
and the API prefixes' JSON answer when a request fails outside a view's own error handling."""

import logging
import re
import uuid
from contextvars import ContextVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import sync_and_async_middleware
from django.utils.log import log_response

from core.errors import NotFoundError, error_body

# SPEC §5: SpecArena's error shape under /api/ (but the OpenAPI pages are ours), the SPEC's
# everywhere else.
API_PREFIXES = ("/api/", "/web/api/", "/console/api/", "/bridge/")
_OPENAPI_PAGES = ("/api/schema/", "/api/docs/")
SERVER_ERROR_MESSAGE = "Something went wrong on our side; it has been logged."

_request_id: ContextVar[str] = ContextVar("request_id", default="-")
# A proxy's id is kept when it looks like one, so one id follows a request through both logs.
_GIVEN_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{8,64}")


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIXES)


def error_json(path: str, *, status: int, code: str, message: str) -> JsonResponse:
    """An error in the shape of the surface `path` belongs to (pages get the SPEC's)."""
    if path.startswith("/api/") and not path.startswith(_OPENAPI_PAGES):
        return JsonResponse({"error": message, "code": code.upper()}, status=status)
    return JsonResponse(error_body(code=code, message=message), status=status)


class RequestIdFilter(logging.Filter):
    """Puts the id of the request being served on each log record ('-' outside one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get()
        return True


def request_id_for(given: str) -> str:
    """A request's id: the proxy's X-Request-ID when it looks like one, else a new one."""
    return given if _GIVEN_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


def _named(request: HttpRequest):
    request.request_id = request_id_for(request.headers.get("X-Request-ID", ""))
    return _request_id.set(request.request_id)


@sync_and_async_middleware
def request_id(get_response):
    """Names every request: the id is on each log line written while it runs and in the
    response's X-Request-ID, so a client's report finds the server's log."""
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> HttpResponse:
            token = _named(request)
            try:
                response = await get_response(request)
            finally:
                _request_id.reset(token)
            response["X-Request-ID"] = request.request_id
            return response

    else:

        def middleware(request: HttpRequest) -> HttpResponse:
            token = _named(request)
            try:
                response = get_response(request)
            finally:
                _request_id.reset(token)
            response["X-Request-ID"] = request.request_id
            return response

    return middleware


class ApiErrors:
    """Under the API prefixes no answer is an HTML page: an exception no view handled is
    logged once, with the request id, and answered as a JSON 500; an error page Django or a
    middleware made (a 400 for a suspicious request, a 500) is rewritten as JSON."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest):
        if self.async_mode:
            return self._acall(request)
        return self._as_json(request, self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return self._as_json(request, await self.get_response(request))

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_api_path(request.path):
            if isinstance(exception, NotFoundError):
                raise Http404(exception.message)  # a service's "no such thing" on a page
            return None  # pages keep Django's error page
        response = error_json(
            request.path, status=500, code="server_error", message=SERVER_ERROR_MESSAGE
        )
        # Logged as Django logs an unhandled exception (the request id comes with every
        # line, RequestIdFilter); log_response marks it logged, so Django does not again.
        log_response(
            "Internal Server Error: %s",
            request.path,
            response=response,
            request=request,
            exception=exception,
        )
        return response

    @staticmethod
    def _as_json(request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if (
            response.status_code < 400
            or response.streaming
            or not is_api_path(request.path)
            or response.get("Content-Type", "").startswith("application/json")
        ):
            return response
        if response.status_code >= 500:
            code, message = "server_error", SERVER_ERROR_MESSAGE
        else:
            code = response.reason_phrase.lower().replace(" ", "_")
            message = f"{response.reason_phrase}."
        # Rewritten in place: the response keeps its headers and its "already logged" mark.
        answer = error_json(request.path, status=response.status_code, code=code, message=message)
        response.content = answer.content
        response["Content-Type"] = answer["Content-Type"]
        if response.has_header("Content-Length"):
            response["Content-Length"] = str(len(response.content))
        return response


def refuse_nul_characters(get_response):
    """A NUL in the path or query string is a 400: PostgreSQL stores no NUL in text, so a
    lookup with one would fail as a server error, and no legitimate link contains one."""

    def middleware(request: HttpRequest) -> HttpResponse:
        query = request.GET
        if "\x00" in request.path or any(
            "\x00" in key or any("\x00" in value for value in query.getlist(key)) for key in query
        ):
            return error_json(
                request.path,
                status=400,
                code="invalid",
                message="The address may not contain NUL (%00) characters.",
            )
        return get_response(request)

    return middleware
