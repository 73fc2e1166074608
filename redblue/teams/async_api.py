"""DRF views with `async def` handlers, for the endpoints that wait on a model (SPEC §4c).

DRF's own dispatch is sync, so under ASGI it would hold a thread and a pooled database
connection for the whole model call. Here DRF's parsing, authentication, permissions and
exception handler (the JSON error shape) run through `run_orm`, which hands the
connection back before the handler awaits the model; the model and judge run with
`run_model`, on a thread that touches no database.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.db import connections
from rest_framework.views import APIView

Result = TypeVar("Result")


def release_database_connections() -> None:
    """Close this thread's connections (with a pool: give them back), except one inside a
    transaction, which belongs to the caller (a test's, or an atomic block)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


async def run_orm(function: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
    """Sync ORM work on the request's thread, its connections released afterwards."""

    def call() -> Result:
        try:
            return function(*args, **kwargs)
        finally:
            release_database_connections()

    return await sync_to_async(call, thread_sensitive=True)()


async def run_model(function: Callable[..., Result], /, *args: Any, **kwargs: Any) -> Result:
    """A blocking model or judge call on a thread of its own; it must not use the ORM."""
    return await sync_to_async(function, thread_sensitive=False)(*args, **kwargs)


class AsyncApiView(APIView):
    async def dispatch(self, request, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs
        request = self.initialize_request(request, *args, **kwargs)
        self.request = request
        self.headers = self.default_response_headers
        try:
            await run_orm(self.initial, request, *args, **kwargs)
            method = request.method.lower()
            handler = self.http_method_not_allowed
            if method in self.http_method_names:
                handler = getattr(self, method, self.http_method_not_allowed)
            if iscoroutinefunction(handler):
                response = await handler(request, *args, **kwargs)
            else:
                response = await run_orm(handler, request, *args, **kwargs)
        except Exception as exc:
            response = self.handle_exception(exc)
        self.response = self.finalize_response(request, response, *args, **kwargs)
        return self.response
