import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from players.models import Membership, PlayerProfile
from tests.factories import make_creator, make_end_user

pytestmark = pytest.mark.django_db


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def superuser():
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw-12345-x")


def workspace_form(workspace, memberships) -> dict:
    data = {
        "name": workspace.name,
        "team_size_limit": str(workspace.team_size_limit),
        "board_visibility": workspace.board_visibility,
        "brackets-TOTAL_FORMS": "0",
        "brackets-INITIAL_FORMS": "0",
        "memberships-TOTAL_FORMS": str(len(memberships)),
        "memberships-INITIAL_FORMS": str(len(memberships)),
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }
    for index, (membership, role, delete) in enumerate(memberships):
        data[f"memberships-{index}-id"] = str(membership.pk)
        data[f"memberships-{index}-workspace"] = str(workspace.pk)
        data[f"memberships-{index}-role"] = role
        if delete:
            data[f"memberships-{index}-DELETE"] = "on"
    return data


def test_it_shows_a_creator_only_their_workspaces(creator, outsider, workspace, other_workspace):
    client = admin_client(creator)

    listed = client.get("/admin/players/workspace/").content.decode()
    assert workspace.name in listed
    assert other_workspace.name not in listed
    opened = client.get(f"/admin/players/workspace/{other_workspace.pk}/change/")
    assert opened.status_code in (302, 404)
    assert other_workspace.name.encode() not in opened.content
    assert client.get("/admin/players/workspace/add/").status_code == 403


def test_it_lets_an_owner_change_roles_without_listing_every_account(
    creator, viewer, outsider, workspace
):
    client = admin_client(creator)
    url = f"/admin/players/workspace/{workspace.pk}/change/"

    page = client.get(url).content.decode()
    assert viewer.email in page
    assert outsider.email not in page

    owner = Membership.objects.get(user=creator)
    member = Membership.objects.get(user=viewer)
    response = client.post(
        url, workspace_form(workspace, [(owner, "owner", False), (member, "editor", False)])
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    member.refresh_from_db()
    assert member.role == "editor"


def test_it_keeps_at_least_one_owner(creator, viewer, workspace):
    owner = Membership.objects.get(user=creator)
    member = Membership.objects.get(user=viewer)

    response = admin_client(creator).post(
        f"/admin/players/workspace/{workspace.pk}/change/",
        workspace_form(workspace, [(owner, "editor", False), (member, "viewer", False)]),
    )

    assert response.status_code == 200
    assert "A workspace needs at least one owner." in response.content.decode()
    owner.refresh_from_db()
    assert owner.role == "owner"


def test_it_lets_editors_and_viewers_look_but_not_manage_members(creator, viewer, workspace):
    editor = make_creator(workspace=workspace, role="editor")
    member = Membership.objects.get(user=viewer)
    owner = Membership.objects.get(user=creator)

    for user in (editor, viewer):
        client = admin_client(user)
        url = f"/admin/players/workspace/{workspace.pk}/change/"
        assert client.get(url).status_code == 200
        response = client.post(
            url, workspace_form(workspace, [(owner, "owner", False), (member, "owner", False)])
        )
        assert response.status_code == 403
    member.refresh_from_db()
    assert member.role == "viewer"


def test_it_shows_end_users_read_only_but_their_bracket_and_scoped(
    creator, viewer, workspace, other_workspace
):
    mine = make_end_user(workspace=workspace, external_id="dify-alice")
    theirs = make_end_user(workspace=other_workspace, external_id="dify-rival")
    client = admin_client(creator)

    listed = client.get("/admin/players/enduser/").content.decode()
    assert "dify-alice" in listed
    assert "dify-rival" not in listed
    page = client.get(f"/admin/players/enduser/{mine.pk}/change/")
    assert page.status_code == 200
    # Only the bracket can be changed (docs/events.md); the rest is written by play.
    assert b'name="bracket"' in page.content
    assert b'name="external_id"' not in page.content
    assert b'name="display_name"' not in page.content
    client.post(
        f"/admin/players/enduser/{mine.pk}/change/",
        {"external_id": "renamed", "display_name": "Renamed", "bracket": ""},
    )
    mine.refresh_from_db()
    assert (mine.external_id, mine.display_name) == ("dify-alice", "")
    assert (
        admin_client(viewer).post(f"/admin/players/enduser/{mine.pk}/change/", {}).status_code
        == 403
    )
    assert client.get("/admin/players/enduser/add/").status_code == 403
    hidden = client.get(f"/admin/players/enduser/{theirs.pk}/change/")
    assert hidden.status_code in (302, 404)
    assert b"dify-rival" not in hidden.content


def test_it_keeps_player_profiles_and_accounts_for_superusers(creator, player):
    PlayerProfile.objects.create(account=player, display_name="Zed the Player")
    client = admin_client(creator)

    assert client.get("/admin/players/playerprofile/").status_code == 403
    assert client.get("/admin/auth/user/").status_code == 403
    index = client.get("/admin/").content.decode()
    assert "Player profiles" not in index
    assert "Challenges" in index

    root = admin_client(superuser())
    assert "Zed the Player" in root.get("/admin/players/playerprofile/").content.decode()
    assert root.get("/admin/auth/user/").status_code == 200


def test_it_lets_nobody_without_a_workspace_into_creator_pages(player):
    player.is_staff = True
    player.save()
    client = admin_client(player)

    assert client.get("/admin/challenges/challenge/").status_code == 403
    assert client.get("/admin/players/workspace/").status_code == 403
