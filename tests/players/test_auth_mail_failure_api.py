"""The mail server is outside the machine; when it is down the API says so instead of a 500."""

import socket

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from tests.conftest import client_for


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True)
def _mail_server_down():
    with override_settings(
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=_closed_port(),
        EMAIL_TIMEOUT=2,
    ):
        yield


def test_a_code_send_answers_503(player):
    response = client_for().post(
        "/web/api/login/email-code/send", {"email": "player@example.com"}, format="json"
    )

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "mail_unavailable"


def test_registering_keeps_the_account_and_says_the_mail_failed(db):
    api = client_for()
    response = api.post(
        "/web/api/register",
        {"email": "new@example.com", "name": "Ada", "password": "a-long-pass-phrase-7"},
        format="json",
    )

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "mail_unavailable"
    assert get_user_model().objects.filter(email="new@example.com").exists()
    login = api.post(
        "/web/api/login",
        {"email": "new@example.com", "password": "a-long-pass-phrase-7"},
        format="json",
    )
    assert login.status_code == 200
