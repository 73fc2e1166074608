import re
import time

import pytest
from allauth.account import app_settings as allauth_settings
from django.core import mail
from django.test import override_settings

from tests.conftest import client_for

SEND = "/web/api/login/email-code/send"
VERIFY = "/web/api/login/email-code/verify"


def _code_from_mail() -> str:
    body = mail.outbox[-1].body
    match = re.search(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", body, re.MULTILINE)
    assert match, body
    return match.group(1)


@pytest.fixture
def api():
    return client_for()


def test_it_emails_a_code_that_logs_the_player_in(api, player):
    response = api.post(SEND, {"email": "Player@Example.com"}, format="json")
    assert response.status_code == 202
    assert response.json()["expires_in"] == allauth_settings.LOGIN_BY_CODE_TIMEOUT
    assert mail.outbox[-1].to == ["player@example.com"]

    response = api.post(
        VERIFY, {"email": "player@example.com", "code": _code_from_mail()}, format="json"
    )

    assert response.status_code == 200
    body = response.json()
    assert body["player"]["id"] == player.pk
    assert body["player"]["email"] == "player@example.com"
    me = client_for()
    me.credentials(HTTP_AUTHORIZATION=f"Bearer {body['access_token']}")
    assert me.get("/web/api/me").json()["id"] == player.pk


def test_it_does_not_reveal_whether_an_email_has_an_account(api, player):
    known = api.post(SEND, {"email": "player@example.com"}, format="json")
    unknown = api.post(SEND, {"email": "nobody@example.com"}, format="json")

    assert known.status_code == unknown.status_code == 202
    assert known.json() == unknown.json()
    # allauth tells the unknown address that it has no account instead of sending a code.
    assert mail.outbox[-1].to == ["nobody@example.com"]
    response = api.post(VERIFY, {"email": "nobody@example.com", "code": "ABC123"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_code"


def test_it_refuses_a_wrong_code(api, player):
    api.post(SEND, {"email": "player@example.com"}, format="json")
    code = _code_from_mail()
    wrong = "AAAA-AAAA" if code != "AAAA-AAAA" else "BBBB-BBBB"

    response = api.post(VERIFY, {"email": "player@example.com", "code": wrong}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_code"
    assert "access_token" not in response.json()


def test_it_refuses_a_code_for_an_email_that_asked_for_none(api, player):
    response = api.post(VERIFY, {"email": "player@example.com", "code": "ABC123"}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_code"


def test_it_burns_the_code_after_allauths_maximum_of_wrong_tries(api, player):
    api.post(SEND, {"email": "player@example.com"}, format="json")
    code = _code_from_mail()
    wrong = "AAAA-AAAA" if code != "AAAA-AAAA" else "BBBB-BBBB"
    for _ in range(allauth_settings.LOGIN_BY_CODE_MAX_ATTEMPTS):
        api.post(VERIFY, {"email": "player@example.com", "code": wrong}, format="json")

    response = api.post(VERIFY, {"email": "player@example.com", "code": code}, format="json")

    assert response.status_code == 400


def test_it_refuses_an_expired_code(api, player, monkeypatch):
    api.post(SEND, {"email": "player@example.com"}, format="json")
    code = _code_from_mail()
    later = time.time() + allauth_settings.LOGIN_BY_CODE_TIMEOUT + 1
    monkeypatch.setattr(time, "time", lambda: later)

    response = api.post(VERIFY, {"email": "player@example.com", "code": code}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_code"


def test_it_throttles_code_sends_with_retry_after(api, player):
    statuses = [
        api.post(SEND, {"email": "player@example.com"}, format="json").status_code for _ in range(3)
    ]
    assert statuses == [202, 202, 202]

    response = api.post(SEND, {"email": "player@example.com"}, format="json")

    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert response.json()["error"]["code"] == "rate_limited"


def test_it_only_keeps_the_latest_code(api, player):
    api.post(SEND, {"email": "player@example.com"}, format="json")
    first = _code_from_mail()
    api.post(SEND, {"email": "player@example.com"}, format="json")
    latest = _code_from_mail()

    if first != latest:
        stale = api.post(VERIFY, {"email": "player@example.com", "code": first}, format="json")
        assert stale.status_code == 400
    response = api.post(VERIFY, {"email": "player@example.com", "code": latest}, format="json")
    assert response.status_code == 200


def test_it_asks_for_an_email(api):
    response = api.post(SEND, {"email": "not-an-email"}, format="json")

    assert response.status_code == 400
    assert "email" in response.json()["error"]["fields"]


@override_settings(LOGIN_RATE_LIMIT="3/d")
def test_it_throttles_code_checks_per_address_of_the_caller(api, player):
    for _ in range(3):
        api.post(VERIFY, {"email": "player@example.com", "code": "AAAA-AAAA"}, format="json")

    response = api.post(VERIFY, {"email": "player@example.com", "code": "AAAA-AAAA"}, format="json")

    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
