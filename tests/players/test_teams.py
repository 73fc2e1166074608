"""Teams over the players' API (/web/api/teams…) and the creators' (/console/api/teams…):
create, join by code, leave, the captain's tools, and every refusal."""

import pytest

from players.models import Team, TeamMember
from players.services import end_user_for_account
from players.teams.services import team_size_limit_set
from tests.conftest import client_for
from tests.factories import make_challenge, make_player, make_workspace

pytestmark = pytest.mark.django_db


@pytest.fixture
def arena(workspace):
    make_challenge(workspace=workspace, name="Vault")
    return workspace


def player_api(email: str):
    account = make_player(email)
    return account, client_for(account)


def create(api, workspace, name="Red Herrings"):
    return api.post("/web/api/teams", {"workspace": workspace.slug, "name": name}, format="json")


def join(api, code):
    return api.post("/web/api/teams/join", {"invite_code": code}, format="json")


def error_code(response) -> str:
    return response.json()["error"]["code"]


def member_names(body) -> list[str]:
    return [member["name"] for member in body["members"]]


def test_it_makes_a_team_whose_maker_is_captain_and_sees_the_code(arena):
    account, api = player_api("ada@example.com")

    response = create(api, arena)

    assert response.status_code == 201
    body = response.json()
    assert body["name"] == "Red Herrings"
    assert body["workspace"] == arena.slug
    assert body["is_member"] is True
    assert body["size_limit"] == 4
    assert len(body["invite_code"]) == 11  # ABCDE-FGHJK
    assert [(m["name"], m["is_captain"]) for m in body["members"]] == [
        (f"player-{account.pk}", True)
    ]
    assert response["Cache-Control"] == "no-store"
    member = TeamMember.objects.get()
    assert member.end_user == end_user_for_account(workspace=arena, account=account)


def test_a_player_joins_with_the_code_however_it_is_typed(arena):
    _, captain = player_api("ada@example.com")
    code = create(captain, arena).json()["invite_code"]
    _, grace = player_api("grace@example.com")

    response = join(grace, " " + code.lower().replace("-", "") + " ")

    assert response.status_code == 200
    assert response.json()["invite_code"] == code
    assert len(response.json()["members"]) == 2
    assert [m["is_captain"] for m in response.json()["members"]] == [True, False]


def test_an_unknown_code_is_404(arena):
    _, api = player_api("ada@example.com")
    response = join(api, "AAAAA-BBBBB")
    assert response.status_code == 404
    assert error_code(response) == "not_found"
    assert "invite_code" in response.json()["error"]["fields"]
    assert join(api, "").status_code == 400


def test_a_full_team_is_409_team_full(arena):
    team_size_limit_set(workspace=arena, team_size_limit=2)
    _, captain = player_api("ada@example.com")
    code = create(captain, arena).json()["invite_code"]
    assert join(player_api("grace@example.com")[1], code).status_code == 200

    response = join(player_api("linus@example.com")[1], code)

    assert response.status_code == 409
    assert error_code(response) == "team_full"
    assert TeamMember.objects.count() == 2


def test_a_player_is_in_one_team_per_workspace_and_may_play_in_another(arena):
    _, ada = player_api("ada@example.com")
    _, grace = player_api("grace@example.com")
    first = create(ada, arena).json()["invite_code"]
    second = create(grace, arena, name="Blue Whales").json()["invite_code"]

    joined_twice = join(ada, second)
    created_twice = create(ada, arena, name="Third")
    own_again = join(ada, first)

    for response in (joined_twice, created_twice, own_again):
        assert response.status_code == 409
        assert error_code(response) == "already_in_team"
    assert Team.objects.count() == 2
    elsewhere = make_workspace("Rival Labs")
    make_challenge(workspace=elsewhere)
    assert create(ada, elsewhere, name="Red Herrings").status_code == 201


def test_a_team_name_is_taken_once_per_workspace_whatever_its_case(arena):
    create(player_api("ada@example.com")[1], arena, name="Red Herrings")
    _, grace = player_api("grace@example.com")

    response = create(grace, arena, name="  red   HERRINGS ")

    assert response.status_code == 409
    assert error_code(response) == "team_name_taken"
    assert response.json()["error"]["fields"]["name"]
    other = make_workspace("Rival Labs")
    assert create(grace, other, name="Red Herrings").status_code == 201


@pytest.mark.parametrize(
    "body, field",
    [
        ({"name": "x"}, "workspace"),
        ({"workspace": "acme-red-team"}, "name"),
        ({"workspace": "acme-red-team", "name": "   "}, "name"),
        ({"workspace": "acme-red-team", "name": "\u202eevil"}, "name"),
        ({"workspace": "acme-red-team", "name": "n" * 61}, "name"),
        ({"workspace": "acme-red-team", "name": "Herrings", "captain": "eve"}, "captain"),
    ],
)
def test_bad_input_is_400_naming_the_field(arena, body, field):
    response = player_api("ada@example.com")[1].post("/web/api/teams", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert Team.objects.count() == 0


def test_an_unknown_workspace_is_404(arena):
    response = player_api("ada@example.com")[1].post(
        "/web/api/teams", {"workspace": "nowhere", "name": "Lost"}, format="json"
    )
    assert response.status_code == 404
    assert response.json()["error"]["fields"]["workspace"]


def test_the_code_is_shown_to_members_only(arena):
    _, ada = player_api("ada@example.com")
    team = create(ada, arena).json()
    outsider = player_api("eve@example.com")[1]

    for api in (outsider, client_for()):
        response = api.get(f"/web/api/teams/{team['id']}")
        assert response.status_code == 200
        assert "invite_code" not in response.json()
        assert team["invite_code"] not in response.content.decode()
        assert response.json()["is_member"] is False
        assert response.json()["members"] == team["members"]
    assert ada.get(f"/web/api/teams/{team['id']}").json()["invite_code"] == team["invite_code"]
    listed = ada.get("/web/api/me/teams").json()
    assert [t["invite_code"] for t in listed["results"]] == [team["invite_code"]]
    assert outsider.get("/web/api/me/teams").json()["results"] == []


def test_an_unknown_or_malformed_team_is_404(arena):
    _, api = player_api("ada@example.com")
    for team_id in ("not-a-uuid", "00000000-0000-0000-0000-000000000000"):
        assert api.get(f"/web/api/teams/{team_id}").status_code == 404
        assert api.post(f"/web/api/teams/{team_id}/leave").status_code == 404
        assert api.post(f"/web/api/teams/{team_id}/invite-code").status_code == 404


def test_anonymous_players_are_refused(arena, anon_api):
    assert create(anon_api, arena).status_code == 401
    assert join(anon_api, "AAAAA-BBBBB").status_code == 401
    assert anon_api.get("/web/api/me/teams").status_code == 401


def test_a_leaving_captain_hands_over_and_the_last_one_out_dissolves_the_team(arena):
    _, ada = player_api("ada@example.com")
    grace_account, grace = player_api("grace@example.com")
    linus_account, linus = player_api("linus@example.com")
    team = create(ada, arena).json()
    join(grace, team["invite_code"])
    join(linus, team["invite_code"])

    assert ada.post(f"/web/api/teams/{team['id']}/leave").status_code == 204
    after = grace.get(f"/web/api/teams/{team['id']}").json()
    assert [(m["name"], m["is_captain"]) for m in after["members"]] == [
        (f"player-{grace_account.pk}", True),
        (f"player-{linus_account.pk}", False),
    ]
    again = ada.post(f"/web/api/teams/{team['id']}/leave")
    assert again.status_code == 409
    assert error_code(again) == "not_in_team"

    assert grace.post(f"/web/api/teams/{team['id']}/leave").status_code == 204
    assert linus.post(f"/web/api/teams/{team['id']}/leave").status_code == 204
    assert not Team.objects.exists()
    assert join(ada, team["invite_code"]).status_code == 404


def test_only_the_captain_removes_members(arena):
    _, ada = player_api("ada@example.com")
    grace_account, grace = player_api("grace@example.com")
    _, linus = player_api("linus@example.com")
    _, eve = player_api("eve@example.com")
    team = create(ada, arena).json()
    join(grace, team["invite_code"])
    join(linus, team["invite_code"])
    grace_id = str(end_user_for_account(workspace=arena, account=grace_account).pk)
    captain_id = team["members"][0]["end_user_id"]
    path = f"/web/api/teams/{team['id']}/members/"

    for api in (linus, eve):
        response = api.delete(path + grace_id)
        assert response.status_code == 403
        assert error_code(response) == "not_captain"
    assert ada.delete(path + captain_id).status_code == 400
    assert ada.delete(path + "not-a-uuid").status_code == 404

    assert ada.delete(path + grace_id).status_code == 204
    assert grace.get("/web/api/me/teams").json()["results"] == []
    assert ada.delete(path + grace_id).status_code == 404
    assert len(ada.get(f"/web/api/teams/{team['id']}").json()["members"]) == 2


def test_the_captain_makes_a_new_code_and_the_old_one_stops_working(arena):
    _, ada = player_api("ada@example.com")
    _, grace = player_api("grace@example.com")
    team = create(ada, arena).json()
    join(grace, team["invite_code"])

    refused = grace.post(f"/web/api/teams/{team['id']}/invite-code")
    renewed = ada.post(f"/web/api/teams/{team['id']}/invite-code")

    assert refused.status_code == 403
    assert renewed.status_code == 200
    new_code = renewed.json()["invite_code"]
    assert new_code != team["invite_code"]
    _, linus = player_api("linus@example.com")
    assert join(linus, team["invite_code"]).status_code == 404
    assert join(linus, new_code).status_code == 200


def test_with_teams_off_nobody_makes_or_joins_a_team(arena):
    _, ada = player_api("ada@example.com")
    team = create(ada, arena).json()
    team_size_limit_set(workspace=arena, team_size_limit=0)

    made = create(player_api("grace@example.com")[1], arena, name="Other")
    joined = join(player_api("linus@example.com")[1], team["invite_code"])

    for response in (made, joined):
        assert response.status_code == 403
        assert error_code(response) == "teams_off"
    assert ada.post(f"/web/api/teams/{team['id']}/leave").status_code == 204


def test_joins_are_rate_limited_per_player(arena, settings):
    settings.TEAM_JOIN_RATE_LIMIT = "2/m"
    _, api = player_api("mallory@example.com")
    statuses = [join(api, f"AAAAA-BBBB{n}").status_code for n in range(3)]
    assert statuses[:2] == [404, 404]
    assert statuses[2] == 429


# --- Creators ---------------------------------------------------------------------------


@pytest.fixture
def formed(arena):
    _, ada = player_api("ada@example.com")
    grace_account, grace = player_api("grace@example.com")
    team = create(ada, arena).json()
    join(grace, team["invite_code"])
    return {"team": team, "grace": end_user_for_account(workspace=arena, account=grace_account)}


def test_creators_list_their_workspaces_teams_with_members_and_no_code(
    formed, creator_api, outsider_api, arena
):
    response = creator_api.get("/console/api/teams", {"workspace": arena.slug})

    assert response.status_code == 200
    [team] = response.json()["results"]
    assert team["name"] == "Red Herrings"
    assert len(team["members"]) == 2
    assert "invite_code" not in team
    assert formed["team"]["invite_code"] not in response.content.decode()
    assert creator_api.get(f"/console/api/teams/{team['id']}").status_code == 200
    assert outsider_api.get("/console/api/teams").json()["results"] == []
    assert outsider_api.get("/console/api/teams", {"workspace": arena.slug}).status_code == 404
    assert outsider_api.get(f"/console/api/teams/{team['id']}").status_code == 404


def test_a_creator_removes_a_member_and_others_may_not(
    formed, creator_api, viewer_api, outsider_api
):
    path = f"/console/api/teams/{formed['team']['id']}/members/{formed['grace'].pk}"

    assert outsider_api.delete(path).status_code == 404
    assert viewer_api.delete(path).status_code == 403
    assert creator_api.delete(path).status_code == 204
    assert creator_api.delete(path).status_code == 404
    assert TeamMember.objects.filter(end_user=formed["grace"]).count() == 0


def test_a_creator_removing_the_captain_hands_over(formed, creator_api):
    captain = formed["team"]["members"][0]["end_user_id"]
    path = f"/console/api/teams/{formed['team']['id']}/members/{captain}"

    assert creator_api.delete(path).status_code == 204

    assert TeamMember.objects.get().end_user == formed["grace"]
    assert TeamMember.objects.get().is_captain


def test_creators_read_and_set_the_team_size_limit(arena, creator_api, viewer_api, outsider_api):
    path = f"/console/api/team-settings?workspace={arena.slug}"

    assert creator_api.get(path).json() == {"workspace": arena.slug, "team_size_limit": 4}
    assert creator_api.patch(path, {"team_size_limit": 6}, format="json").json() == {
        "workspace": arena.slug,
        "team_size_limit": 6,
    }
    assert viewer_api.get(path).json()["team_size_limit"] == 6
    assert viewer_api.patch(path, {"team_size_limit": 2}, format="json").status_code == 403
    assert outsider_api.get(path).status_code == 404
    assert outsider_api.patch(path, {"team_size_limit": 2}, format="json").status_code == 404
    for bad in (-1, 101, "many", None):
        response = creator_api.patch(path, {"team_size_limit": bad}, format="json")
        assert response.status_code == 400
        assert "team_size_limit" in response.json()["error"]["fields"]
    arena.refresh_from_db()
    assert arena.team_size_limit == 6
