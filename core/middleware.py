"""Request checks that every view relies on, before any view or database sees the request."""

from django.http import HttpRequest, HttpResponse, JsonResponse


def refuse_nul_characters(get_response):
    """A NUL in the path or query string is a 400: PostgreSQL stores no NUL in text, so a
    lookup with one would fail as a server error, and no legitimate link contains one."""

    def middleware(request: HttpRequest) -> HttpResponse:
        query = request.GET
        if "\x00" in request.path or any(
            "\x00" in key or any("\x00" in value for value in query.getlist(key)) for key in query
        ):
            return JsonResponse(
                {
                    "error": {
                        "code": "invalid",
                        "message": "The address may not contain NUL (%00) characters.",
                        "fields": {},
                    }
                },
                status=400,
            )
        return get_response(request)

    return middleware
