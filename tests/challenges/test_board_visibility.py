"""Who sees a workspace's boards: `public` (anyone), `players` (its signed-in players) or
`hidden` (its creators), on the web API, the pages, the scoreboard and its CSV, the
websocket and the board cache; and who may change the event's settings."""

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client

from challenges.board_cache import board_cached
from challenges.board_refresh import board_refreshes_wait
from config.asgi import application
from players.events import workspace_event_update
from players.services import end_user_for_account
from tests.conftest import client_for
from tests.factories import make_challenge, make_player, record_win

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def board(workspace):
    challenge = make_challenge(workspace=workspace, name="Guarded")
    record_win(challenge, "ada")
    return challenge


def member_player(workspace):
    account = make_player()
    end_user_for_account(workspace=workspace, account=account)
    return account


def reads(challenge, user=None) -> dict[str, int]:
    """The status of every public channel of the challenge's boards for this viewer."""
    client = Client()
    if user is not None:
        client.force_login(user)
    slug = challenge.workspace.slug
    return {
        "api": client.get(f"/web/api/challenges/{challenge.id}/leaderboard").status_code,
        "api_limit": client.get(
            f"/web/api/challenges/{challenge.id}/leaderboard?limit=3"
        ).status_code,
        "scoreboard_api": client.get(f"/web/api/scoreboard/{slug}").status_code,
        "scoreboard_csv": client.get(f"/web/api/scoreboard/{slug}?format=csv").status_code,
        "scoreboard_page": client.get(f"/scoreboard/{slug}/").status_code,
    }


def socket_opens(challenge, user=None) -> bool:
    async def scenario():
        communicator = WebsocketCommunicator(
            application,
            f"/ws/leaderboards/challenge/{challenge.id}/",
            headers=[(b"origin", b"http://127.0.0.1")],
        )
        if user is not None:
            communicator.scope["user"] = user
        connected, _ = await communicator.connect(timeout=5)
        if connected:
            frame = await communicator.receive_json_from(timeout=5)
            assert frame["entries"]
            await communicator.disconnect()
        return connected

    return async_to_sync(scenario)()


ALL_OK = {
    "api": 200,
    "api_limit": 200,
    "scoreboard_api": 200,
    "scoreboard_csv": 200,
    "scoreboard_page": 200,
}
ALL_404 = dict.fromkeys(ALL_OK, 404)


def test_public_boards_are_read_by_anyone(board):
    assert reads(board) == ALL_OK
    assert socket_opens(board)


def test_players_boards_are_read_by_the_workspaces_players_only(workspace, board, creator):
    workspace_event_update(workspace=workspace, board_visibility="players")
    assert reads(board) == ALL_404
    assert reads(board, make_player()) == ALL_404, "signed in, but no player of this workspace"
    assert reads(board, member_player(workspace)) == ALL_OK
    assert reads(board, creator) == ALL_OK
    assert not socket_opens(board)
    assert socket_opens(board, member_player(workspace))
    page = Client().get(f"/challenges/{board.slug}/").content.decode()
    assert ">ada</a>" not in page and "to its signed-in players only" in page
    # Not in the cache, so the lane never answers it for anyone.
    Client().get(f"/web/api/challenges/{board.id}/leaderboard")
    assert async_to_sync(board_cached)(board.id) is None


def test_hidden_boards_are_read_by_creators_only(workspace, board, creator, viewer):
    workspace_event_update(workspace=workspace, board_visibility="hidden")
    assert reads(board) == ALL_404
    assert reads(board, member_player(workspace)) == ALL_404
    assert reads(board, creator) == ALL_OK
    assert reads(board, viewer) == ALL_OK
    assert not socket_opens(board, member_player(workspace))
    assert socket_opens(board, creator)
    player_page = Client().get(f"/players/{board.leaderboard_entries.get().end_user_id}/")
    assert player_page.status_code == 404


def test_a_socket_closes_when_the_boards_become_hidden(workspace, board):
    async def scenario():
        communicator = WebsocketCommunicator(
            application,
            f"/ws/leaderboards/challenge/{board.id}/",
            headers=[(b"origin", b"http://127.0.0.1")],
        )
        assert (await communicator.connect(timeout=5))[0]
        await communicator.receive_json_from(timeout=5)
        from channels.db import database_sync_to_async

        # Frames of the fixture's own writes (drawn by the coalesced refresh) come first.
        await database_sync_to_async(board_refreshes_wait)()
        while not await communicator.receive_nothing(timeout=0.3):
            await communicator.receive_output()
        await database_sync_to_async(workspace_event_update)(
            workspace=workspace, board_visibility="hidden"
        )
        closed = await communicator.receive_output(timeout=5)
        assert closed == {"type": "websocket.close", "code": 4404}

    async_to_sync(scenario)()


def test_the_settings_api_is_the_workspaces_own(workspace, creator_api, outsider_api, viewer_api):
    body = creator_api.get("/console/api/workspace").json()
    assert body["slug"] == workspace.slug and body["board_visibility"] == "public"

    # Another workspace's settings: 404 whether read or written.
    assert outsider_api.get(f"/console/api/workspace?workspace={workspace.slug}").status_code == 404
    denied = outsider_api.patch(
        f"/console/api/workspace?workspace={workspace.slug}",
        {"board_visibility": "hidden"},
        format="json",
    )
    assert denied.status_code == 404
    assert (
        viewer_api.patch(
            "/console/api/workspace", {"board_visibility": "hidden"}, format="json"
        ).status_code
        == 403
    )
    assert Client().patch("/console/api/workspace").status_code in (401, 403)
    workspace.refresh_from_db()
    assert workspace.board_visibility == "public"


def test_the_settings_api_sets_and_checks_the_event(workspace, creator_api):
    changed = creator_api.patch(
        "/console/api/workspace",
        {
            "starts_at": "2030-01-01T10:00:00Z",
            "ends_at": "2030-01-01T18:00:00Z",
            "freeze_at": "2030-01-01T17:00:00Z",
            "board_visibility": "players",
        },
        format="json",
    )
    assert changed.status_code == 200, changed.json()
    body = changed.json()
    assert body["freeze_at"] == "2030-01-01T17:00:00Z" and body["frozen"] is False

    for bad, field in [
        ({"ends_at": "2030-01-01T09:00:00Z"}, "ends_at"),
        ({"freeze_at": "2030-01-01T19:00:00Z"}, "freeze_at"),
        ({"board_visibility": "secret"}, "board_visibility"),
        ({"colour": "red"}, "colour"),
    ]:
        refused = creator_api.patch("/console/api/workspace", bad, format="json")
        assert refused.status_code == 400, bad
        assert field in refused.json()["error"]["fields"], bad
    workspace.refresh_from_db()
    assert workspace.ends_at.hour == 18 and workspace.board_visibility == "players"


def test_attempts_outside_the_event_window_are_refused_as_a_closed_challenge(
    workspace, player, creator_api
):
    challenge = make_challenge(workspace=workspace, name="Window")
    creator_api.patch(
        "/console/api/workspace", {"starts_at": "2099-01-01T00:00:00Z"}, format="json"
    )
    early = client_for(player).post(
        f"/web/api/challenges/{challenge.id}/attempts", {"prompt": "hi"}, format="json"
    )
    assert early.status_code == 409
    assert early.json()["error"]["code"] == "challenge_closed"
    assert "not started" in early.json()["error"]["message"]
    listed = Client().get("/web/api/challenges").json()["results"]
    assert challenge.slug not in {row["slug"] for row in listed}

    creator_api.patch(
        "/console/api/workspace",
        {"starts_at": "2000-01-01T00:00:00Z", "ends_at": "2000-01-02T00:00:00Z"},
        format="json",
    )
    late = client_for(player).post(
        f"/web/api/challenges/{challenge.id}/attempts", {"prompt": "hi"}, format="json"
    )
    assert late.status_code == 409 and "ended" in late.json()["error"]["message"]


def test_the_admin_form_checks_the_event_times(workspace, creator):
    admin = Client()
    admin.force_login(creator)
    change = f"/admin/players/workspace/{workspace.pk}/change/"
    fields = {
        "name": workspace.name,
        "starts_at_0": "2030-01-01",
        "starts_at_1": "10:00:00",
        "ends_at_0": "2030-01-01",
        "ends_at_1": "18:00:00",
        "freeze_at_0": "2030-01-01",
        "freeze_at_1": "19:00:00",
        "board_visibility": "public",
        "team_size_limit": "4",
        "brackets-TOTAL_FORMS": "0",
        "brackets-INITIAL_FORMS": "0",
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
    }
    refused = admin.post(change, fields)
    assert refused.status_code == 200
    assert "A freeze must begin before the end" in refused.content.decode()
    workspace.refresh_from_db()
    assert workspace.freeze_at is None

    saved = admin.post(change, {**fields, "freeze_at_1": "17:00:00"})
    assert saved.status_code == 302
    workspace.refresh_from_db()
    assert workspace.freeze_at is not None and workspace.board_cutoff() is None
