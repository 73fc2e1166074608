import pytest

from players.models import EndUser, PlayerProfile
from players.services import end_user_for_account, profile_create
from tests import factories
from tests.conftest import client_for

PROFILE = "/web/api/me/profile"


@pytest.fixture
def player_api(player):
    profile_create(account=player, display_name="Grace")
    return client_for(player)


def test_it_updates_only_the_fields_sent(player_api, player):
    response = player_api.patch(
        PROFILE,
        {"avatar_url": "https://images.example.com/me.png", "notify_on_first_blood": False},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["avatar_url"] == "https://images.example.com/me.png"
    assert response.json()["notify_on_first_blood"] is False
    profile = PlayerProfile.objects.get(account=player)
    assert profile.display_name == "Grace"
    assert profile.notify_on_record_beaten is True


def test_it_renames_the_player_on_every_workspace_leaderboard(player_api, player):
    first = end_user_for_account(workspace=factories.make_workspace("One"), account=player)
    second = end_user_for_account(workspace=factories.make_workspace("Two"), account=player)
    stranger = factories.make_end_user(workspace=factories.make_workspace("Three"))

    response = player_api.patch(PROFILE, {"display_name": "  Grace   Hopper "}, format="json")

    assert response.status_code == 200
    assert response.json()["display_name"] == "Grace Hopper"
    names = dict(EndUser.objects.values_list("id", "display_name"))
    assert names[first.id] == names[second.id] == "Grace Hopper"
    assert names[stranger.id] == ""


def test_a_new_end_user_starts_with_the_profile_name(player_api, player):
    player_api.patch(PROFILE, {"display_name": "Hopper"}, format="json")

    end_user = end_user_for_account(workspace=factories.make_workspace(), account=player)

    assert end_user.display_name == "Hopper"
    assert end_user.external_id == f"account:{player.pk}"


@pytest.mark.parametrize(
    "avatar_url",
    [
        "http://images.example.com/me.png",
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "not a url",
        "https://" + "a" * 300 + ".example.com/",
    ],
)
def test_it_refuses_an_avatar_url_that_is_not_https(player_api, player, avatar_url):
    response = player_api.patch(PROFILE, {"avatar_url": avatar_url}, format="json")

    assert response.status_code == 400
    assert "avatar_url" in response.json()["error"]["fields"]
    assert PlayerProfile.objects.get(account=player).avatar_url == ""


def test_it_clears_the_avatar_with_an_empty_string(player_api, player):
    player_api.patch(PROFILE, {"avatar_url": "https://images.example.com/a.png"}, format="json")

    response = player_api.patch(PROFILE, {"avatar_url": ""}, format="json")

    assert response.status_code == 200
    assert response.json()["avatar_url"] == ""


@pytest.mark.parametrize("display_name", ["", "   ", "x" * 151])
def test_it_refuses_a_bad_display_name(player_api, player, display_name):
    response = player_api.patch(PROFILE, {"display_name": display_name}, format="json")

    assert response.status_code == 400
    assert "display_name" in response.json()["error"]["fields"]
    assert PlayerProfile.objects.get(account=player).display_name == "Grace"


def test_it_refuses_a_non_boolean_preference(player_api):
    response = player_api.patch(PROFILE, {"notify_on_first_blood": "sometimes"}, format="json")

    assert response.status_code == 400
    assert "notify_on_first_blood" in response.json()["error"]["fields"]


def test_it_changes_nothing_when_one_field_is_invalid(player_api, player):
    response = player_api.patch(
        PROFILE,
        {"display_name": "New name", "avatar_url": "http://plain.example.com/"},
        format="json",
    )

    assert response.status_code == 400
    assert PlayerProfile.objects.get(account=player).display_name == "Grace"


def test_it_needs_a_token(anon_api, db):
    response = anon_api.patch(PROFILE, {"display_name": "x"}, format="json")

    assert response.status_code == 401
