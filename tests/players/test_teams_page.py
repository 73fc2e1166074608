"""The Team page (/teams/) and the teams in the creators' admin."""

import re

import pytest
from django.test import Client

from players.models import Membership, Team, TeamMember
from players.services import end_user_for_account
from players.teams.services import team_create, team_join
from tests.factories import make_challenge, make_player
from tests.players.test_admin_players import workspace_form

pytestmark = pytest.mark.django_db


def logged_in(account) -> Client:
    client = Client()
    client.force_login(account)
    return client


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


@pytest.fixture
def arena(workspace):
    make_challenge(workspace=workspace, name="Vault")
    return workspace


def test_a_player_makes_a_team_reads_its_code_and_another_joins_with_it(arena):
    ada, grace = make_player("ada@example.com"), make_player("grace@example.com")
    as_ada, as_grace = logged_in(ada), logged_in(grace)

    page = as_ada.get("/teams/")
    assert page.status_code == 200
    assert page["Cache-Control"] == "no-store"
    assert 'name="name"' in page.content.decode()
    made = as_ada.post("/teams/create", {"workspace": arena.slug, "name": "Herrings"}, follow=True)
    code = Team.objects.get().invite_code
    assert code in made.content.decode()
    assert "Your team is made" in " ".join(messages_of(made))

    joined = as_grace.post("/teams/join", {"invite_code": code.lower()}, follow=True)

    assert messages_of(joined) == ["You joined the team."]
    html = joined.content.decode()
    assert "Herrings" in html and code in html
    assert html.count('class="team-member-name"') == 2
    # Grace is not the captain: no tools to remove members or make a new code.
    assert "Remove" not in html and "New invite code" not in html
    assert "Remove" in as_ada.get("/teams/").content.decode()


def test_refusals_show_as_messages_and_change_nothing(arena):
    ada = make_player("ada@example.com")
    client = logged_in(ada)
    team_create(account=ada, workspace=arena, name="Herrings")

    for path, data, says in [
        ("/teams/join", {"invite_code": "AAAAA-BBBBB"}, "No team has that invite code."),
        ("/teams/create", {"workspace": arena.slug, "name": "Other"}, "already in a team"),
        ("/teams/create", {"workspace": "nowhere", "name": "Other"}, "No workspace"),
    ]:
        response = client.post(path, data, follow=True)
        assert response.status_code == 200
        assert says in " ".join(messages_of(response))
    assert Team.objects.count() == 1


def test_the_captain_removes_a_member_renews_the_code_and_leaves(arena):
    ada, grace = make_player("ada@example.com"), make_player("grace@example.com")
    team = team_create(account=ada, workspace=arena, name="Herrings")
    team_join(account=grace, invite_code=team.invite_code)
    grace_player = end_user_for_account(workspace=arena, account=grace)
    as_ada, as_grace = logged_in(ada), logged_in(grace)

    refused = as_grace.post(f"/teams/{team.pk}/invite-code", follow=True)
    assert "Only the team's captain" in " ".join(messages_of(refused))
    as_ada.post(f"/teams/{team.pk}/invite-code")
    team.refresh_from_db()
    assert team.invite_code not in refused.content.decode()

    as_ada.post(f"/teams/{team.pk}/members/{grace_player.pk}/remove")
    assert not TeamMember.objects.filter(end_user=grace_player).exists()
    assert team.invite_code not in as_grace.get("/teams/").content.decode()

    left = as_ada.post(f"/teams/{team.pk}/leave", follow=True)
    assert messages_of(left)[-1] == "You left the team."
    assert not Team.objects.exists()


def test_anonymous_visitors_are_asked_to_sign_in(arena):
    page = Client().get("/teams/").content.decode()
    assert "Sign in</a> to make a team" in page
    assert f'href="/scoreboard/{arena.slug}/teams/"' in page
    response = Client().post("/teams/join", {"invite_code": "AAAAA-BBBBB"})
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
    assert Client().get("/teams/join").status_code in (302, 405)


def test_the_header_reaches_the_team_page(arena):
    home = Client().get("/").content.decode()
    assert re.search(r'<nav class="nav nav-main".*href="/teams/">Teams</a>', home, re.S)


# --- Admin ------------------------------------------------------------------------------


def test_creators_see_their_workspaces_teams_and_removing_the_captain_hands_over(
    arena, creator, outsider, viewer
):
    ada, grace = make_player("ada@example.com"), make_player("grace@example.com")
    team = team_create(account=ada, workspace=arena, name="Herrings")
    team_join(account=grace, invite_code=team.invite_code)
    captain = TeamMember.objects.get(is_captain=True)
    change = f"/admin/players/team/{team.pk}/change/"

    listing = logged_in(creator).get("/admin/players/team/").content.decode()
    assert "Herrings" in listing
    assert "Herrings" not in logged_in(outsider).get("/admin/players/team/").content.decode()
    assert logged_in(outsider).get(change).status_code == 302  # "does not exist" redirect
    form = logged_in(creator).get(change)
    assert form.status_code == 200
    assert team.invite_code not in form.content.decode()
    assert logged_in(viewer).post(change, {}).status_code == 403

    members = TeamMember.objects.order_by("joined_at", "id")
    data = {
        "name": "Herrings",
        "members-TOTAL_FORMS": "2",
        "members-INITIAL_FORMS": "2",
        "members-MIN_NUM_FORMS": "0",
        "members-MAX_NUM_FORMS": "1000",
        "members-0-id": str(members[0].pk),
        "members-0-team": str(team.pk),
        "members-0-DELETE": "on",
        "members-1-id": str(members[1].pk),
        "members-1-team": str(team.pk),
    }
    response = logged_in(creator).post(change, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert not TeamMember.objects.filter(pk=captain.pk).exists()
    assert TeamMember.objects.get().is_captain
    assert logged_in(creator).get("/admin/players/team/add/").status_code == 403


def test_owners_set_the_team_size_limit_in_the_workspace_admin(arena, creator):
    url = f"/admin/players/workspace/{arena.pk}/change/"
    page = logged_in(creator).get(url)
    assert 'name="team_size_limit"' in page.content.decode()
    owner = Membership.objects.get(user=creator)
    form = workspace_form(arena, [(owner, "owner", False)])

    too_big = logged_in(creator).post(url, {**form, "team_size_limit": "101"})
    changed = logged_in(creator).post(url, {**form, "team_size_limit": "2"})

    assert too_big.status_code == 200  # the form again, with the error
    assert changed.status_code == 302
    arena.refresh_from_db()
    assert arena.team_size_limit == 2
