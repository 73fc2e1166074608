"""The interface language: from Accept-Language at sign-up, on the profile, in mails."""

import pytest
from django.core import mail
from django.test import Client

from players.models import PlayerProfile
from players.services import profile_create
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def test_a_password_sign_up_takes_the_offered_language_the_browser_asks_for(settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = "optional"
    settings.ACCOUNT_PREVENT_ENUMERATION = False
    response = client_for().post(
        "/web/api/register",
        {"email": "new@example.com", "name": "Ada", "password": "a-long-pass-phrase-7"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="xx-YY, fr-CH;q=0.9, en;q=0.1",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["player"]["interface_language"] == "fr"


def test_the_profile_api_changes_it_to_an_offered_language_only(player):
    api = client_for(player)
    assert (
        api.patch("/web/api/me/profile", {"interface_language": "de"}, format="json").json()[
            "interface_language"
        ]
        == "de"
    )

    refused = api.patch("/web/api/me/profile", {"interface_language": "klingon"}, format="json")

    assert refused.status_code == 400
    assert "interface_language" in refused.json()["error"]["fields"]
    assert PlayerProfile.objects.get(account=player).interface_language == "de"


def test_the_profile_page_shows_and_edits_it(player):
    profile_create(account=player, display_name="Grace", interface_language="fr")
    browser = Client()
    browser.force_login(player)
    page = browser.get("/profile/").content.decode()
    assert 'value="fr" selected' in page

    browser.post(
        "/profile/",
        {"display_name": "Grace", "avatar_url": "", "interface_language": "de"},
    )

    assert PlayerProfile.objects.get(account=player).interface_language == "de"


def test_mails_are_sent_in_the_players_language(player):
    api = client_for()
    api.post("/web/api/login/email-code/send", {"email": "player@example.com"}, format="json")
    english = mail.outbox[-1].subject

    profile_create(account=player, display_name="Grace", interface_language="de")
    api.post("/web/api/login/email-code/send", {"email": "player@example.com"}, format="json")

    assert "Sign-In Code" in english
    assert "Anmeldecode" in mail.outbox[-1].subject
