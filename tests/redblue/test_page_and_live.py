"""The /red-blue/<id>/ page and its websocket: standings on connect, pushes after commit."""

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from config.asgi import application
from redblue.teams.services.challenges import red_blue_challenge_update
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_page_shows_the_suite_standings_and_the_join_buttons(client, red_blue, players):
    anonymous = client.get(f"/red-blue/{red_blue.id}/")
    assert anonymous.status_code == 200
    html = anonymous.content.decode()
    assert "Red vs Blue" in html and "CBRNE" in html and "Sign in" in html
    assert "<script>" not in html and "onclick" not in html

    client.force_login(players("alice").account)
    html = client.get(f"/red-blue/{red_blue.id}/").content.decode()
    assert 'data-join="red"' in html and 'data-join="blue"' in html


def test_a_player_sees_their_pairings_on_the_page(client, red_blue, players):
    players("blue").submit(red_blue, "blue", WEAK_DEFENSE)
    players("red").submit(red_blue, "red", ROLEPLAY_ATTACK)
    client.force_login(players("red").account)
    html = client.get(f"/red-blue/{red_blue.id}/").content.decode()
    assert 'data-team="red"' in html
    assert "pairing-completed" in html
    assert "CBRNE" in html


def test_unknown_and_closed_challenges_are_404(client, red_blue):
    assert client.get("/red-blue/nope/").status_code == 404
    red_blue_challenge_update(challenge=red_blue, user=None, is_active=False)
    assert client.get(f"/red-blue/{red_blue.id}/").status_code == 404


def socket(path: str) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, path, headers=[(b"origin", b"http://127.0.0.1")])


def test_the_socket_sends_the_standings_then_each_judged_pairing(red_blue, players):
    blue, red = players("blue"), players("red")
    red_id = str(red.end_user(red_blue).id)

    async def scenario():
        communicator = socket(f"/ws/leaderboards/red-blue/{red_blue.id}/")
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        first = await communicator.receive_json_from(timeout=5)
        assert first["type"] == "standings"
        assert first["standings"]["red"]["points"] == 0.0

        await database_sync_to_async(blue.submit)(red_blue, "blue", WEAK_DEFENSE)
        await database_sync_to_async(red.submit)(red_blue, "red", ROLEPLAY_ATTACK)
        while True:
            frame = await communicator.receive_json_from(timeout=5)
            completed = [p for p in frame.get("pairings", []) if p["status"] == "completed"]
            if completed:
                break
        assert completed[0]["categories"]["CBRNE"] is True
        assert completed[0]["attacker_id"] == red_id
        assert frame["standings"]["red"]["points"] == 3.0
        assert frame["standings"]["blue"]["ratio"] == 0.625
        assert "response" not in completed[0]
        assert ROLEPLAY_ATTACK not in str(frame)
        await communicator.disconnect()

        refused = socket("/ws/leaderboards/red-blue/nope/")
        connected, _ = await refused.connect(timeout=5)
        assert not connected

    async_to_sync(scenario)()
