from players.services import profile_create
from tests.conftest import client_for


def test_it_shows_the_logged_in_player(player):
    profile_create(account=player, display_name="Grace")

    response = client_for(player).get("/web/api/me")

    assert response.status_code == 200
    assert response.json() == {
        "id": player.pk,
        "email": "player@example.com",
        "display_name": "Grace",
        "avatar_url": "",
        "notify_on_first_blood": True,
        "notify_on_record_beaten": True,
        "notify_on_waves": True,
        "interface_language": "",
        "share_attempts": False,
    }


def test_it_shows_defaults_for_an_account_without_a_profile(player):
    response = client_for(player).get("/web/api/me")

    assert response.status_code == 200
    assert response.json()["display_name"] == ""


def test_it_needs_a_token(anon_api, db):
    response = anon_api.get("/web/api/me")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_it_refuses_a_bad_token(anon_api, db):
    anon_api.credentials(HTTP_AUTHORIZATION="Bearer phc_not-a-real-token")

    response = anon_api.get("/web/api/me")

    assert response.status_code == 401
