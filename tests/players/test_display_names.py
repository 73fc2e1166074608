"""Issue 8, finding 13: display names that impersonate or vanish are refused wherever a
name is set: the profile API and page, the sign-up API and page, and the admin."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from players.models import PlayerProfile
from players.services import profile_create
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

REFUSED = {
    "right-to-left override": "\u202eDemo Player",
    "isolate": "Demo \u2066Player\u2069",
    "left-to-right mark": "Demo\u200ePlayer",
    "arabic letter mark": "Demo\u061cPlayer",
    "only zero-width spaces": "\u200b\u200b\u200b",
    "only a word joiner and a BOM": "\u2060\ufeff",
    "only combining marks": "\u0301\u0301",
    "only hangul fillers": "\u3164\u3164",
    "only the braille blank": "\u2800",
    "a control character": "Demo\x07Player",
    "the dify marker": "Demo Player · Dify",
    "the marker in other dress": "Demo Player (DIFY)",
    "the marker in full width": "Demo Player ·\uff24\uff49\uff46\uff59",
}
ACCEPTED = ["Grace Hopper", "Modify", "سارة", "李雷", "👩\u200d💻 Ada", "O'Brien-Smith"]


@pytest.mark.parametrize("name", REFUSED.values(), ids=REFUSED.keys())
def test_the_profile_api_refuses_the_name(player, name):
    profile_create(account=player, display_name="Grace")
    response = client_for(player).patch(
        "/web/api/me/profile", {"display_name": name}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["display_name"]
    assert PlayerProfile.objects.get(account=player).display_name == "Grace"


@pytest.mark.parametrize("name", ACCEPTED)
def test_the_profile_api_accepts_names_in_any_script(player, name):
    response = client_for(player).patch(
        "/web/api/me/profile", {"display_name": name}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["display_name"] == name


def test_the_profile_page_shows_why_a_name_is_refused(player):
    profile_create(account=player, display_name="Grace")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(player)
    browser.get("/profile/")
    response = browser.post(
        "/profile/",
        {
            "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
            "display_name": "\u202eDemo Player",
            "avatar_url": "",
        },
    )
    assert response.status_code == 200
    assert "text-direction control characters" in response.content.decode()
    assert PlayerProfile.objects.get(account=player).display_name == "Grace"


@pytest.mark.parametrize("name", ["\u202eDemo Player", "\u200b\u200b", "Ann · Dify"])
def test_the_register_api_refuses_the_name(anon_api, name):
    response = anon_api.post(
        "/web/api/register",
        {"email": "new@example.com", "name": name, "password": "a-long-pass-phrase-7"},
        format="json",
    )
    assert response.status_code == 400
    assert "name" in response.json()["error"]["fields"]
    assert not get_user_model().objects.filter(email="new@example.com").exists()


def test_the_sign_up_page_refuses_the_name(db):
    browser = Client(enforce_csrf_checks=True)
    browser.get("/accounts/signup/")
    response = browser.post(
        "/accounts/signup/",
        {
            "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
            "email": "new@example.com",
            "name": "Demo\u2067 Player",
            "password1": "a-long-pass-phrase-7",
            "password2": "a-long-pass-phrase-7",
        },
    )
    assert response.status_code == 200
    assert "text-direction control characters" in response.content.decode()
    assert not get_user_model().objects.filter(email="new@example.com").exists()


def test_the_admin_refuses_the_name(player):
    profile = profile_create(account=player, display_name="Grace")
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "root-pass-9")
    browser = Client()
    browser.force_login(admin)
    response = browser.post(
        f"/admin/players/playerprofile/{profile.pk}/change/",
        {
            "account": player.pk,
            "display_name": "\u202eDemo Player",
            "avatar_url": "",
            "notify_on_first_blood": "on",
        },
    )
    assert response.status_code == 200
    assert "text-direction control characters" in response.content.decode()
    profile.refresh_from_db()
    assert profile.display_name == "Grace"
