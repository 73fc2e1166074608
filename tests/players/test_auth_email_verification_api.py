"""ACCOUNT_EMAIL_VERIFICATION=mandatory: allauth holds the login until the email is confirmed."""

import re

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import override_settings

from tests.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _mandatory_verification():
    with override_settings(
        ACCOUNT_EMAIL_VERIFICATION="mandatory", ACCOUNT_PREVENT_ENUMERATION=True
    ):
        yield


def _register(api):
    return api.post(
        "/web/api/register",
        {"email": "new@example.com", "name": "Ada", "password": "a-long-pass-phrase-7"},
        format="json",
    )


def test_registering_creates_the_account_but_asks_to_confirm_first():
    response = _register(client_for())

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "email_verification_required"
    assert get_user_model().objects.filter(email="new@example.com").exists()
    assert "/accounts/confirm-email/" in mail.outbox[-1].body


def test_registering_a_taken_address_looks_the_same_and_mails_its_owner(player):
    response = _register(client_for())
    taken = client_for().post(
        "/web/api/register",
        {"email": "player@example.com", "name": "Eve", "password": "a-long-pass-phrase-7"},
        format="json",
    )

    assert taken.status_code == response.status_code == 403
    assert taken.json() == response.json()
    assert mail.outbox[-1].to == ["player@example.com"]
    assert get_user_model().objects.filter(email="player@example.com").count() == 1


def test_a_password_login_waits_for_the_confirmation():
    api = client_for()
    _register(api)

    response = api.post(
        "/web/api/login",
        {"email": "new@example.com", "password": "a-long-pass-phrase-7"},
        format="json",
    )

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "email_verification_required"


def test_a_login_code_proves_the_address_and_logs_in():
    api = client_for()
    _register(api)

    api.post("/web/api/login/email-code/send", {"email": "new@example.com"}, format="json")
    code = re.search(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", mail.outbox[-1].body, re.M).group(1)
    response = api.post(
        "/web/api/login/email-code/verify",
        {"email": "new@example.com", "code": code},
        format="json",
    )

    assert response.status_code == 200
    assert EmailAddress.objects.get(email="new@example.com").verified
