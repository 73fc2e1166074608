import pytest
from django.test import Client

from players.models import EndUser, PlayerProfile
from players.services import end_user_for_account, profile_create
from tests import factories


@pytest.fixture
def browser(player):
    profile_create(account=player, display_name="Grace")
    client = Client(enforce_csrf_checks=True)
    client.force_login(player)
    return client


def _post(browser, **fields):
    browser.get("/profile/")
    data = {
        "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
        "display_name": "Grace",
        "avatar_url": "",
        "notify_on_first_blood": "on",
    }
    data.update(fields)
    return browser.post("/profile/", data)


def test_it_sends_anonymous_visitors_to_the_login_page(db):
    response = Client().get("/profile/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/profile/")


def test_it_shows_the_current_profile(browser):
    response = browser.get("/profile/")

    assert response.status_code == 200
    html = response.content.decode()
    assert 'value="Grace"' in html
    assert "csrfmiddlewaretoken" in html
    title = html.split("<title>", 1)[1].split("</title>", 1)[0]
    assert title.strip() == "Your profile · Prompt Hacking Challenges"
    assert html.count('<section class="dify-links">') == 1


def test_it_saves_the_profile_and_renames_the_end_users(browser, player):
    end_user = end_user_for_account(workspace=factories.make_workspace(), account=player)

    response = _post(
        browser, display_name="Grace Hopper", avatar_url="https://images.example.com/g.png"
    )

    assert response.status_code == 302
    profile = PlayerProfile.objects.get(account=player)
    assert profile.display_name == "Grace Hopper"
    assert profile.avatar_url == "https://images.example.com/g.png"
    assert profile.notify_on_first_blood is True
    assert profile.notify_on_record_beaten is False
    assert EndUser.objects.get(pk=end_user.pk).display_name == "Grace Hopper"
    assert "Your profile is saved." in browser.get("/profile/").content.decode()


def test_it_shows_why_an_avatar_url_is_refused(browser, player):
    response = _post(browser, avatar_url="javascript:alert(1)")

    assert response.status_code == 200
    assert "Enter a full https:// URL." in response.content.decode()
    assert PlayerProfile.objects.get(account=player).avatar_url == ""


def test_it_refuses_a_post_without_the_csrf_token(browser, player):
    response = browser.post("/profile/", {"display_name": "Mallory"})

    assert response.status_code == 403
    assert PlayerProfile.objects.get(account=player).display_name == "Grace"
