import pytest
from django.core import mail

from tests.conftest import client_for

LOGIN = "/web/api/login"


@pytest.fixture
def api():
    return client_for()


def test_it_logs_a_player_in_with_a_token(api, player):
    response = api.post(
        LOGIN, {"email": "player@example.com", "password": "correct-horse-9"}, format="json"
    )

    assert response.status_code == 200
    body = response.json()
    assert body["access_token"].startswith("phc_")
    assert body["player"] == {
        "id": player.pk,
        "email": "player@example.com",
        "display_name": "",
        "avatar_url": "",
        "notify_on_first_blood": True,
        "notify_on_record_beaten": True,
        "notify_on_waves": True,
        "interface_language": "",
        "share_attempts": False,
    }
    # The API answers with a token; it leaves no logged-in session behind.
    assert "sessionid" not in response.cookies


def test_it_accepts_the_email_in_any_case(api, player):
    response = api.post(
        LOGIN, {"email": "PLAYER@example.COM", "password": "correct-horse-9"}, format="json"
    )

    assert response.status_code == 200


def test_it_refuses_a_wrong_password(api, player):
    response = api.post(
        LOGIN, {"email": "player@example.com", "password": "wrong-horse-9"}, format="json"
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_credentials"


def test_it_answers_an_unknown_email_exactly_like_a_wrong_password(api, player):
    wrong_password = api.post(
        LOGIN, {"email": "player@example.com", "password": "wrong-horse-9"}, format="json"
    )
    unknown = api.post(
        LOGIN, {"email": "nobody@example.com", "password": "wrong-horse-9"}, format="json"
    )

    assert unknown.status_code == wrong_password.status_code == 401
    assert unknown.json() == wrong_password.json()
    assert mail.outbox == []


def test_it_needs_email_and_password(api):
    response = api.post(LOGIN, {"email": "nope"}, format="json")

    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"email", "password"}


def test_it_throttles_repeated_failed_logins_with_retry_after(api, player):
    for _ in range(5):
        response = api.post(
            LOGIN, {"email": "player@example.com", "password": "wrong-horse-9"}, format="json"
        )
        assert response.status_code == 401

    response = api.post(
        LOGIN, {"email": "player@example.com", "password": "correct-horse-9"}, format="json"
    )

    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert response.json()["error"]["code"] == "rate_limited"


def test_it_leaves_the_callers_browser_session_alone(player):
    from django.test import Client

    browser = Client()
    browser.force_login(player)

    response = browser.post(
        LOGIN,
        {"email": "player@example.com", "password": "correct-horse-9"},
        content_type="application/json",
    )

    assert response.status_code == 200
    assert browser.get("/profile/").status_code == 200
