import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core import mail

from players.models import Membership, PlayerProfile, Workspace
from tests.conftest import client_for

REGISTER = "/web/api/register"


@pytest.fixture
def api():
    return client_for()


def _register(api, **overrides):
    body = {"email": "new@example.com", "name": "Ada", "password": "a-long-pass-phrase-7"}
    body.update(overrides)
    return api.post(REGISTER, body, format="json")


@pytest.fixture
def hiding(settings):
    """Production's default: confirmed addresses only, taken addresses not told apart."""
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNT_PREVENT_ENUMERATION = True


def test_with_hiding_it_creates_an_account_with_a_profile_and_says_a_mail_was_sent(api, db, hiding):
    response = _register(api)

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "email_verification_required"
    assert "access_token" not in response.json()
    EmailAddress.objects.filter(email="new@example.com").update(verified=True)
    user = get_user_model().objects.get(email="new@example.com")
    assert PlayerProfile.objects.get(account=user).display_name == "Ada"
    login = api.post(
        "/web/api/login",
        {"email": "new@example.com", "password": "a-long-pass-phrase-7"},
        format="json",
    )
    assert login.status_code == 200
    assert login.json()["player"]["display_name"] == "Ada"


def test_with_hiding_it_answers_a_taken_address_exactly_like_a_new_one_and_mails_its_owner(
    api, player, hiding
):
    new = _register(api)
    taken = _register(client_for(), email="Player@example.com", name="Eve")

    assert taken.status_code == new.status_code == 403
    assert taken.json() == new.json()
    assert mail.outbox[-1].to == ["player@example.com"]
    assert "already" in mail.outbox[-1].body
    assert get_user_model().objects.filter(email__iexact="player@example.com").count() == 1
    assert not PlayerProfile.objects.filter(display_name="Eve").exists()


def test_with_hiding_it_still_reports_other_field_errors_for_a_taken_address(api, player, hiding):
    new = _register(api, password="password")
    taken = _register(client_for(), email="player@example.com", password="password")

    assert taken.status_code == new.status_code == 400
    assert taken.json() == new.json()
    assert set(taken.json()["error"]["fields"]) == {"password"}


def test_it_answers_with_a_token(api, db):
    response = _register(api)

    assert response.status_code == 201
    body = response.json()
    user = get_user_model().objects.get(email="new@example.com")
    assert body["player"]["id"] == user.pk
    assert body["player"]["display_name"] == "Ada"
    me = client_for()
    me.credentials(HTTP_AUTHORIZATION=f"Bearer {body['access_token']}")
    assert me.get("/web/api/me").json()["email"] == "new@example.com"


def test_it_sends_a_confirmation_mail_and_creates_no_workspace(api, db):
    _register(api)

    assert not EmailAddress.objects.get(email="new@example.com").verified
    assert [message.to for message in mail.outbox] == [["new@example.com"]]
    assert "/accounts/confirm-email/" in mail.outbox[0].body
    assert not Workspace.objects.exists()
    assert not Membership.objects.exists()


def test_it_refuses_a_weak_password(api, db):
    response = _register(api, password="password")

    assert response.status_code == 400
    assert "password" in response.json()["error"]["fields"]
    assert not get_user_model().objects.exists()


def test_without_hiding_it_refuses_a_taken_address(api, player):
    response = _register(api, email="Player@example.com")

    assert response.status_code == 400
    assert "email" in response.json()["error"]["fields"]
    assert get_user_model().objects.count() == 1


def test_it_needs_every_field(api, db):
    response = api.post(REGISTER, {}, format="json")

    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"email", "name", "password"}


def test_it_refuses_a_blank_name(api, db):
    response = _register(api, name="   ")

    assert response.status_code == 400
    assert "name" in response.json()["error"]["fields"]


def test_it_throttles_sign_ups_with_retry_after(api, db, settings):
    settings.ACCOUNT_RATE_LIMITS = {"signup": "1/d/ip"}
    assert _register(api).status_code == 201

    response = _register(api, email="second@example.com")

    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert not get_user_model().objects.filter(email="second@example.com").exists()
