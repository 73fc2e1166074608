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
