"""A bug that still raises under an API prefix answers JSON in that surface's error shape,
never Django's HTML page, and is logged exactly once with the request's id, which the
client sees in X-Request-ID. Pages keep the HTML error page.

The views below stand for a bug: they raise. They sit in front of the site's own routes.
"""

import logging

import pytest
from django.http import HttpResponse
from django.test import Client
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from config.urls import urlpatterns as site_urlpatterns
from core.async_api import AsyncApiView
from core.middleware import RequestIdFilter


def broken_function_view(request):
    raise RuntimeError("a bug in a plain view")


class BrokenApi(APIView):
    authentication_classes: list = []
    permission_classes: list = []

    def get(self, request):
        raise RuntimeError("a bug in a DRF view")


class BrokenAsyncApi(AsyncApiView):
    authentication_classes: list = []
    permission_classes: list = []

    async def get(self, request):
        raise RuntimeError("a bug in an async DRF view")

    async def post(self, request):
        return Response({"ok": True})


def page_view(request):
    if request.GET.get("fail"):
        raise RuntimeError("a bug in a page")
    return HttpResponse("<p>a page</p>")


urlpatterns = [
    path("api/broken", broken_function_view),
    path("web/api/broken", BrokenApi.as_view()),
    path("console/api/broken", BrokenApi.as_view()),
    path("bridge/broken", BrokenAsyncApi.as_view()),
    path("broken-page", page_view),
    *site_urlpatterns,
]

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

SPEC_SHAPE = {
    "error": {
        "code": "server_error",
        "message": "Something went wrong on our side; it has been logged.",
        "fields": {},
    }
}


class LogCapture(logging.Handler):
    """Records what the site's console handler would print, request id included."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.addFilter(RequestIdFilter())
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def logged():
    capture = LogCapture()
    logging.getLogger().addHandler(capture)
    yield capture.records
    logging.getLogger().removeHandler(capture)


@pytest.mark.parametrize(
    "url,body",
    [
        ("/api/broken", {"error": SPEC_SHAPE["error"]["message"], "code": "SERVER_ERROR"}),
        ("/web/api/broken", SPEC_SHAPE),
        ("/console/api/broken", SPEC_SHAPE),
        ("/bridge/broken", SPEC_SHAPE),
    ],
)
def test_it_answers_a_bug_under_an_api_prefix_with_json_logged_once(logged, url, body):
    response = Client().get(url)
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == body
    assert len(logged) == 1
    assert logged[0].request_id == response["X-Request-ID"]
    assert url in logged[0].getMessage()
    assert logged[0].exc_info and "a bug in" in str(logged[0].exc_info[1])


def test_it_keeps_a_proxy_request_id_and_replaces_a_forged_one(logged):
    kept = Client().get("/web/api/broken", headers={"X-Request-ID": "edge-1234-abcd"})
    assert kept["X-Request-ID"] == "edge-1234-abcd"
    assert logged[0].request_id == "edge-1234-abcd"
    forged = Client().get("/web/api/broken", headers={"X-Request-ID": "x INFO fake line"})
    assert logged[1].request_id == forged["X-Request-ID"]
    assert len(forged["X-Request-ID"]) == 32 and "INFO" not in forged["X-Request-ID"]


def test_it_names_every_response():
    first, second = Client().get("/health"), Client().get("/health")
    assert first["X-Request-ID"] != second["X-Request-ID"]


def test_it_leaves_a_bug_on_a_page_to_the_html_error_page():
    response = Client(raise_request_exception=False).get("/broken-page", {"fail": "1"})
    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    "url", ["/web/api/challenges", "/console/api/challenges", "/bridge/dify/judging-llm"]
)
def test_it_answers_an_oversized_body_with_json(settings, url):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = Client().post(url, "x" * 4096, content_type="application/json")
    assert 400 <= response.status_code < 500
    assert set(response.json()["error"]) == {"code", "message", "fields"}


@pytest.mark.parametrize("url", ["/api/arena/join", "/api/users", "/api/chat/send"])
def test_it_answers_an_oversized_arena_body_in_specarena_shape(settings, url):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = Client().post(url, "x" * 4096, content_type="application/json")
    assert response.status_code == 413
    assert response.json() == {
        "error": "The request body is too large.",
        "code": "PAYLOAD_TOO_LARGE",
    }
