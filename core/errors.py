from typing import Any


class ApplicationError(Exception):
    """The one error type services raise; the API layer renders it as the SPEC's shape."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid",
        status: int = 400,
        fields: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.fields = fields or {}
        self.headers = headers or {}


class NotFoundError(ApplicationError):
    def __init__(self, message: str = "Not found.") -> None:
        super().__init__(message, code="not_found", status=404)


def error_body(*, code: str, message: str, fields: dict[str, Any] | None = None) -> dict:
    """The SPEC's error shape (§5), the one body every JSON error outside /api/ carries:
    the API views (core.api), the middleware (core.middleware) and the raw lanes."""
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def fields_invalid(fields: dict[str, Any]) -> ApplicationError:
    """The error of a call with fields that are wrong: each named, with its messages."""
    return ApplicationError(
        "Some fields are invalid: " + ", ".join(sorted(fields)) + ".", fields=fields
    )
