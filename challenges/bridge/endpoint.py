"""The base of the views a bridge key calls (the Dify bridge's endpoints here and red/blue's
team endpoints): the key's authentication, its rate limit, and a JSON body read from the raw
bytes whatever the content type."""

from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from challenges.bridge import services
from challenges.bridge.auth import BridgeKeyAuthentication
from challenges.bridge.limits import key_rate_limit, rate_limit_count
from challenges.models import BridgeKey
from core.async_api import AsyncApiView
from core.parsers import json_object_or_error

BROKEN_BODY_HELP = (
    "Dify's JSON body mode pastes variables into the text as they are, so a model output "
    "with quotes, backslashes or newlines breaks the JSON. Build the body in a Code node "
    "with json.dumps(...) and send it from the HTTP Request node in raw-text mode; "
    "integrations/dify/ ships a workflow and a plugin that do this."
)


class HasBridgeKey(BasePermission):
    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, BridgeKey)


def json_body(raw: bytes) -> dict:
    """The body as a JSON object, whatever the content type (Dify's raw text included)."""
    return json_object_or_error(raw, help_text=BROKEN_BODY_HELP)


class BridgeApi(AsyncApiView):
    # Async: judging awaits the judge or a plugin without holding a database connection.
    authentication_classes = [BridgeKeyAuthentication]
    permission_classes = [HasBridgeKey]
    # The body is parsed by json_body from the raw bytes, so every content type is welcome.
    parser_classes: list = []

    def initial(self, request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        rate_limit_count(key_rate_limit(request.auth.pk))

    def input(self, request, serializer_class) -> dict:
        data = serializer_class(data=json_body(request._request.body))
        data.is_valid(raise_exception=True)
        return data.validated_data

    @staticmethod
    def answer(result: services.BridgeAnswer) -> Response:
        headers = {"Idempotent-Replayed": "true"} if result.replayed else {}
        return Response(result.body, headers=headers)
