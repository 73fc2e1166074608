"""The API conventions every app shares: the error shape, pagination, query parsing."""

import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.http import Http404
from rest_framework import exceptions, pagination, serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from core.errors import ApplicationError, NotFoundError, error_body, fields_invalid
from core.numbers import QUERY_NUMBER_MAX, NumberRefused, bounded_int
from core.outages import MESSAGE, outage_noted, retry_after_header, unavailable_dependency


def error_response(
    *,
    code: str,
    message: str,
    status_code: int,
    fields: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body = error_body(code=code, message=message, fields=fields)
    return Response(body, status=status_code, headers=headers)


def _flatten(detail: Any) -> Any:
    if isinstance(detail, dict):
        return {key: _flatten(value) for key, value in detail.items()}
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            return [str(item) for item in detail]
        return [_flatten(item) for item in detail]
    return [str(detail)]


def _validation_response(detail: Any) -> Response:
    fields = _flatten(detail) if isinstance(detail, dict) else {}
    general = fields.pop("non_field_errors", None) if isinstance(fields, dict) else None
    if general:
        message = " ".join(general)
    elif fields:
        message = fields_invalid(fields).message
    else:
        message = " ".join(_flatten(detail)) or "The request is invalid."
    return error_response(code="invalid", message=message, status_code=400, fields=fields)


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ApplicationError):
        return error_response(
            code=exc.code,
            message=exc.message,
            status_code=exc.status,
            fields=exc.fields,
            headers=exc.headers,
        )
    if isinstance(exc, exceptions.ValidationError):
        return _validation_response(exc.detail)
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        return _validation_response(detail)
    if isinstance(exc, RequestDataTooBig):
        return error_response(
            code="too_large",
            message="The request body is too large.",
            status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, Http404):
        return error_response(code="not_found", message="Not found.", status_code=404)
    if isinstance(exc, PermissionDenied):
        return error_response(
            code="permission_denied",
            message="You do not have permission to do this.",
            status_code=403,
        )
    if isinstance(exc, exceptions.APIException):
        headers = {}
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(int(exc.wait) + 1)
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            headers["WWW-Authenticate"] = 'Bearer realm="api"'
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
        return error_response(
            code=code,
            message=str(exc.detail),
            status_code=exc.status_code,
            headers=headers,
        )
    if dependency := unavailable_dependency(exc):
        outage_noted(dependency, exc)
        response = error_response(
            code="service_unavailable",
            message=MESSAGE,
            status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers=retry_after_header(),
        )
        response._has_been_logged = True  # see core.outages.unavailable_response
        return response
    # Anything else is a bug: DRF re-raises it, and core.middleware.ApiErrors logs it once
    # with the request id and answers the JSON error shape.
    return None


class ErrorsAsJson:
    """For a DRF view that also answers a file or a stream (its own renderers): a DRF
    `Response` — an error, or anything not built as the file — answers as JSON whatever
    the client accepted. Put it before the view class in the bases."""

    def finalize_response(self, request, response, *args, **kwargs):
        renderer = getattr(request, "accepted_renderer", None)
        if isinstance(response, Response) and renderer and renderer.format != "json":
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know instead of silently dropping them."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["Send a JSON object."]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


def parse_bounded_int(
    raw: str | None, *, name: str, default: int, minimum: int, maximum: int
) -> int:
    try:
        return bounded_int(raw, name=name, default=default, minimum=minimum, maximum=maximum)
    except NumberRefused as refused:
        raise ApplicationError(str(refused), fields={name: [f"Must be {refused.range}."]}) from None


class Pagination(pagination.BasePagination):
    """limit/offset pagination that refuses bad values instead of ignoring them."""

    default_limit = 50
    max_limit = 200

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.limit = parse_bounded_int(
            request.query_params.get("limit"),
            name="limit",
            default=self.default_limit,
            minimum=1,
            maximum=self.max_limit,
        )
        self.offset = parse_bounded_int(
            request.query_params.get("offset"),
            name="offset",
            default=0,
            minimum=0,
            maximum=QUERY_NUMBER_MAX,
        )
        self.count = queryset.count()
        return list(queryset[self.offset : self.offset + self.limit])

    def _link(self, offset: int | None) -> str | None:
        if offset is None:
            return None
        url = self.request.build_absolute_uri()
        url = replace_query_param(url, "limit", self.limit)
        if offset <= 0:
            return remove_query_param(url, "offset")
        return replace_query_param(url, "offset", offset)

    def get_paginated_response(self, data) -> Response:
        has_next = self.offset + self.limit < self.count
        has_previous = self.offset > 0
        return Response(
            {
                "count": self.count,
                "limit": self.limit,
                "offset": self.offset,
                "next": self._link(self.offset + self.limit if has_next else None),
                "previous": self._link(max(self.offset - self.limit, 0) if has_previous else None),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["count", "limit", "offset", "results"],
            "properties": {
                "count": {"type": "integer"},
                "limit": {"type": "integer"},
                "offset": {"type": "integer"},
                "next": {"type": "string", "nullable": True, "format": "uri"},
                "previous": {"type": "string", "nullable": True, "format": "uri"},
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            {"name": "limit", "in": "query", "required": False, "schema": {"type": "integer"}},
            {"name": "offset", "in": "query", "required": False, "schema": {"type": "integer"}},
        ]


def uuid_or_404(raw: Any) -> uuid.UUID:
    """An id from a URL or query string; a malformed one reads like an unknown one."""
    try:
        return uuid.UUID(str(raw))
    except ValueError:
        raise NotFoundError() from None


def valid_uuids(values: Any) -> list[uuid.UUID]:
    """The values that are UUIDs, as UUIDs; the others are dropped."""
    found = []
    for value in values:
        try:
            found.append(uuid.UUID(str(value)))
        except ValueError:
            continue
    return found


def object_or_404(queryset: QuerySet, pk: Any) -> Any:
    """The row of `queryset` with primary key `pk`; a 404 when it is not in that set."""
    found = queryset.filter(pk=uuid_or_404(pk)).first()
    if found is None:
        raise NotFoundError()
    return found


def paginated_response(request, view, queryset: QuerySet, serializer_class) -> Response:
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


def leaderboard_limit(request) -> int:
    """Every leaderboard's `?limit=`, bounded by the LEADERBOARD_* settings."""
    return parse_bounded_int(
        request.query_params.get("limit"),
        name="limit",
        default=settings.LEADERBOARD_DEFAULT_LIMIT,
        minimum=1,
        maximum=settings.LEADERBOARD_MAX_LIMIT,
    )


class MoneyField(serializers.DecimalField):
    """An amount (a cost, a price, a budget) as a JSON number, null allowed."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_digits", 16)
        kwargs.setdefault("decimal_places", 6)
        kwargs.setdefault("allow_null", True)
        super().__init__(coerce_to_string=False, **kwargs)

    def to_representation(self, value):
        return None if value is None else float(value)
