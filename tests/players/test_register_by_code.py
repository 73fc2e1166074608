"""POST /web/api/register with an emailed code instead of a password."""

import re

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core import mail

from players.models import PlayerProfile
from tests.conftest import client_for

SEND = "/web/api/login/email-code/send"
REGISTER = "/web/api/register"
ME = "/web/api/me"

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return client_for()


@pytest.fixture(autouse=True)
def mandatory_verification(settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNT_PREVENT_ENUMERATION = True


def _signup_code() -> str:
    body = mail.outbox[-1].body
    match = re.search(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", body, re.MULTILINE)
    assert match, body
    return match.group(1)


def test_it_signs_up_with_the_emailed_code_and_no_password(api):
    sent = api.post(SEND, {"email": "New@Example.com"}, format="json")
    assert sent.status_code == 202
    assert mail.outbox[-1].to == ["new@example.com"]
    code = _signup_code()

    response = api.post(
        REGISTER, {"email": "new@example.com", "name": "Ada", "code": code}, format="json"
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["player"]["email"] == "new@example.com"
    assert body["player"]["display_name"] == "Ada"
    me = client_for()
    me.credentials(HTTP_AUTHORIZATION=f"Bearer {body['access_token']}")
    assert me.get(ME).json()["id"] == body["player"]["id"]
    account = get_user_model().objects.get(email="new@example.com")
    assert not account.has_usable_password()
    assert EmailAddress.objects.get(user=account).verified


def test_the_code_works_once(api):
    api.post(SEND, {"email": "new@example.com"}, format="json")
    code = _signup_code()
    body = {"email": "new@example.com", "name": "Ada", "code": code}
    assert api.post(REGISTER, body, format="json").status_code == 201

    again = api.post(REGISTER, {**body, "email": "new@example.com"}, format="json")

    assert again.status_code == 400
    assert again.json()["error"]["code"] == "invalid_code"
    assert get_user_model().objects.filter(email="new@example.com").count() == 1


def test_it_refuses_a_wrong_code_or_another_address(api):
    api.post(SEND, {"email": "new@example.com"}, format="json")
    code = _signup_code()

    wrong = api.post(
        REGISTER, {"email": "new@example.com", "name": "Ada", "code": "ZZZZ-ZZZZ"}, format="json"
    )
    elsewhere = api.post(
        REGISTER, {"email": "other@example.com", "name": "Ada", "code": code}, format="json"
    )

    assert wrong.status_code == elsewhere.status_code == 400
    assert not get_user_model().objects.filter(email__in=["new@example.com", "other@example.com"])


def test_an_existing_account_gets_a_login_code_not_a_signup_code(api, player):
    api.post(SEND, {"email": "player@example.com"}, format="json")
    code = _signup_code()

    response = api.post(
        REGISTER, {"email": "player@example.com", "name": "Eve", "code": code}, format="json"
    )

    assert response.status_code == 400
    assert get_user_model().objects.filter(email="player@example.com").count() == 1


def test_it_wants_a_password_or_a_code_and_a_valid_name(api):
    neither = api.post(REGISTER, {"email": "new@example.com", "name": "Ada"}, format="json")
    both = api.post(
        REGISTER,
        {"email": "new@example.com", "name": "Ada", "password": "x" * 12, "code": "AAAA-AAAA"},
        format="json",
    )
    assert neither.status_code == both.status_code == 400
    assert "password" in neither.json()["error"]["fields"]
    assert "password" in both.json()["error"]["fields"]

    api.post(SEND, {"email": "new@example.com"}, format="json")
    blank_name = api.post(
        REGISTER, {"email": "new@example.com", "name": "  ", "code": _signup_code()}, format="json"
    )
    assert blank_name.status_code == 400
    assert "name" in blank_name.json()["error"]["fields"]


def test_it_takes_the_language_from_accept_language(api):
    api.post(SEND, {"email": "new@example.com"}, format="json")
    response = api.post(
        REGISTER,
        {"email": "new@example.com", "name": "Ada", "code": _signup_code()},
        format="json",
        HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9,en;q=0.5",
    )
    assert response.json()["player"]["interface_language"] == "de"
    assert PlayerProfile.objects.get().interface_language == "de"
