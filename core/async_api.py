"""DRF views whose handlers are `async def`, for endpoints that wait on a model (SPEC §4c).

DRF's own dispatch is sync, so under ASGI such a view would hold its thread and database
connection for the whole model call. `AsyncApiView` keeps DRF's request parsing,
authentication, permissions, exception handler (the JSON error shape) and the OpenAPI
schema, and runs the sync parts with `run_orm`, which hands the connection back before the
handler awaits anything. Handlers touch the ORM only through `run_orm`.
"""

from asgiref.sync import iscoroutinefunction
from rest_framework.views import APIView

from core.threads import run_orm


class AsyncApiView(APIView):
    async def dispatch(self, request, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs
        request = self.initialize_request(request, *args, **kwargs)
        self.request = request
        self.headers = self.default_response_headers
        try:
            # Session and token look-ups, permissions and throttles may all query.
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
