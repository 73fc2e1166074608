import pytest

pytestmark = pytest.mark.django_db

URL = "/console/api/login"


def test_it_gives_a_creator_a_token_that_works(anon_api, creator):
    response = anon_api.post(
        URL, {"email": "OWNER@acme.test", "password": "correct-horse-9"}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["access_token"]
    assert token.startswith("phc_")
    anon_api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert anon_api.get("/console/api/challenges").status_code == 200


@pytest.mark.parametrize(
    "email,password",
    [("owner@acme.test", "wrong"), ("nobody@acme.test", "correct-horse-9")],
)
def test_it_refuses_wrong_credentials_alike(anon_api, creator, email, password):
    response = anon_api.post(URL, {"email": email, "password": password}, format="json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_credentials"


def test_it_refuses_a_player_account(anon_api, player):
    response = anon_api.post(
        URL, {"email": "player@example.com", "password": "correct-horse-9"}, format="json"
    )
    assert response.status_code == 401


def test_it_refuses_a_bad_token(anon_api):
    anon_api.credentials(HTTP_AUTHORIZATION="Bearer phc_nope")
    response = anon_api.get("/console/api/challenges")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_it_rate_limits_logins(anon_api, creator, settings):
    settings.LOGIN_RATE_LIMIT = "3/m"
    for _ in range(3):
        anon_api.post(URL, {"email": "owner@acme.test", "password": "wrong"}, format="json")
    response = anon_api.post(URL, {"email": "owner@acme.test", "password": "wrong"}, format="json")
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert response.json()["error"]["code"] == "rate_limited"


def test_it_limits_guesses_at_one_account_from_any_number_of_addresses(creator, settings):
    from rest_framework.test import APIClient

    settings.LOGIN_RATE_LIMIT = "1000/m"  # the per-address limit stays out of the way
    allowed = 5  # allauth's default failed-login allowance per account (ACCOUNT_RATE_LIMITS)
    for attempt in range(allowed):
        client = APIClient(REMOTE_ADDR=f"198.51.100.{attempt + 1}")
        wrong = client.post(URL, {"email": "owner@acme.test", "password": "guess"}, format="json")
        assert wrong.status_code == 401
    fresh_address = APIClient(REMOTE_ADDR="203.0.113.77")
    for password in ("another-guess", "correct-horse-9"):
        response = fresh_address.post(
            URL, {"email": "owner@acme.test", "password": password}, format="json"
        )
        assert response.status_code == 429
        assert response.json()["error"]["code"] == "rate_limited"
        assert int(response["Retry-After"]) >= 1
        assert "access_token" not in response.json()
    other_account = fresh_address.post(
        URL, {"email": "nobody@acme.test", "password": "guess"}, format="json"
    )
    assert other_account.status_code == 401


def test_a_right_password_does_not_spend_the_accounts_allowance(anon_api, creator):
    for _ in range(8):
        response = anon_api.post(
            URL, {"email": "owner@acme.test", "password": "correct-horse-9"}, format="json"
        )
        assert response.status_code == 200
