"""Scoring: every strategy updated from each finished game, read back over /api/scoring,
/api/stats and /api/users."""

import json

import pytest
from django.test import Client

from redblue.models import ArenaSession
from tests.arena.conftest import Agent, create_session, game_state, now_ms

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("arena_auth")]


def play_psi(alice: Agent, bob: Agent, *, alice_leaks_bob: bool, bob_finds: bool) -> str:
    """One psi game: Alice always finds the intersection (and, if asked, one of Bob's other
    numbers); Bob either finds it or guesses a number Alice does not hold."""
    session = create_session(Client(), "psi")
    alice.join(session["invites"][0])
    bob.join(session["invites"][1])
    state = game_state(session["id"])
    shared = state["intersectionSet"]
    bob_only = sorted(set(state["userSets"][1]) - set(shared))
    not_alices = next(n for n in range(100, 901) if n not in state["userSets"][0])
    alice.send("guess", " ".join(map(str, shared + (bob_only[:1] if alice_leaks_bob else []))))
    bob.send("guess", " ".join(map(str, shared if bob_finds else [not_alices])))
    return session["id"]


def by_player(entries: list[dict]) -> dict[str, dict]:
    return {entry["playerId"]: entry for entry in entries}


def test_it_updates_every_strategy_from_each_game():
    alice, bob = Agent(), Agent()
    play_psi(alice, bob, alice_leaks_bob=True, bob_finds=True)
    play_psi(alice, bob, alice_leaks_bob=False, bob_finds=False)
    play_psi(alice, bob, alice_leaks_bob=False, bob_finds=True)

    board = Client().get("/api/v1/scoring/psi").json()

    assert set(board) == {"average", "win-rate", "red-team", "consecutive"}
    a, b = alice.keys.user_id, bob.keys.user_id
    average = by_player(board["average"])
    assert average[a]["gamesPlayed"] == 3
    assert average[a]["metrics"] == {"average:security": 1.0, "average:utility": 1.0}
    # Bob: utilities 1, -1, 1; security -1 (leaked once), then 1, 1.
    assert average[b]["metrics"] == {"average:security": 1 / 3, "average:utility": 1 / 3}
    # SpecArena's keys and formulas (its scoring/*.ts), not rounded.
    win_rate = by_player(board["win-rate"])
    assert win_rate[a]["metrics"] == {"win-rate:security": 1.0, "win-rate:utility": 1.0}
    assert win_rate[b]["metrics"] == {"win-rate:security": 2 / 3, "win-rate:utility": 2 / 3}
    red = by_player(board["red-team"])
    assert red[a]["metrics"] == {"red-team:attack": 1 / 3, "red-team:defend": 1.0}
    assert red[b]["metrics"] == {"red-team:attack": 0.0, "red-team:defend": 1 - 1 / 3}
    streak = by_player(board["consecutive"])
    # Alice breached Bob in the first game only: her attack streak ended with the second.
    assert streak[a]["metrics"] == {
        "consecutive:security": 3,
        "consecutive:utility": 3,
        "consecutive:attack": 0,
    }
    # Bob: security -1, 1, 1; utility 1, -1, 1.
    assert streak[b]["metrics"] == {
        "consecutive:security": 2,
        "consecutive:utility": 1,
        "consecutive:attack": 0,
    }
    assert board["average"][0]["playerId"] == a  # ranked best first


def test_it_never_rescans_past_games():
    alice, bob = Agent(), Agent()
    play_psi(alice, bob, alice_leaks_bob=False, bob_finds=False)
    ArenaSession.objects.all().delete()

    play_psi(alice, bob, alice_leaks_bob=False, bob_finds=True)

    board = by_player(Client().get("/api/v1/scoring/psi").json()["average"])
    assert board[bob.keys.user_id]["gamesPlayed"] == 2
    assert board[bob.keys.user_id]["metrics"]["average:utility"] == 0.0


def test_it_combines_per_type_averages_on_the_global_board():
    alice, bob = Agent(), Agent()
    play_psi(alice, bob, alice_leaks_bob=False, bob_finds=False)
    play_psi(alice, bob, alice_leaks_bob=False, bob_finds=False)
    session = create_session(Client(), "millionaire")
    alice.join(session["invites"][0])
    bob.join(session["invites"][1])
    row = ArenaSession.objects.get(pk=session["id"])
    row.game_state = {**row.game_state, "wealth": [10, 90]}
    row.save()
    alice.send("guess", "90")
    bob.send("guess", "5")

    board = by_player(Client().get("/api/scoring").json())

    # Bob: psi utility -1 over two games, millionaire utility +1: the mean of the means is 0.
    assert board[bob.keys.user_id]["gamesPlayed"] == 3
    assert board[bob.keys.user_id]["metrics"]["global-average:utility"] == 0.0
    assert board[bob.keys.user_id]["metrics"]["global-average:security"] == 0.0
    assert board[alice.keys.user_id]["metrics"]["global-average:utility"] == 1.0


def test_it_skips_self_play():
    alice = Agent()
    twin = Agent()
    twin.keys = alice.keys
    play_psi(alice, twin, alice_leaks_bob=False, bob_finds=True)

    assert Client().get("/api/scoring/psi").json() == {}
    assert Client().get("/api/scoring").json() == []


def test_it_names_players_on_the_boards_from_their_signed_profiles():
    alice, bob = Agent(), Agent()
    play_psi(alice, bob, alice_leaks_bob=False, bob_finds=True)
    timestamp = now_ms()
    update = {
        "publicKey": alice.keys.public_hex,
        "signature": alice.keys.sign(f"arena:v1:user-update:{timestamp}"),
        "timestamp": timestamp,
        "username": "alice",
        "model": "claude-sonnet-4-5",
    }

    saved = Client().post("/api/users", json.dumps(update), content_type="application/json")
    forged = Client().post(
        "/api/users",
        json.dumps({**update, "publicKey": bob.keys.public_hex, "username": "mallory"}),
        content_type="application/json",
    )

    assert saved.json() == {
        "userId": alice.keys.user_id,
        "username": "alice",
        "model": "claude-sonnet-4-5",
    }
    assert forged.status_code == 401
    entry = by_player(Client().get("/api/scoring").json())[alice.keys.user_id]
    assert (entry["username"], entry["model"]) == ("alice", "claude-sonnet-4-5")
    merged = Client().post(
        "/api/users",
        json.dumps({**update, "model": None, "username": "alice2"}),
        content_type="application/json",
    )
    assert merged.json()["model"] == "claude-sonnet-4-5"


def test_it_reports_stats_users_and_their_games():
    alice, bob = Agent(), Agent()
    game = play_psi(alice, bob, alice_leaks_bob=False, bob_finds=True)
    create_session(Client(), "psi")
    client = Client()

    stats = client.get("/api/stats").json()
    users = client.get("/api/users").json()
    batch = client.get("/api/users/batch", {"ids": f"{alice.keys.user_id},nobody"}).json()
    games = client.get(f"/api/users/{alice.keys.user_id}/challenges").json()
    scores = client.get(f"/api/users/{alice.keys.user_id}/scores").json()

    assert stats["challenges"]["psi"] == {"gamesPlayed": 1}
    assert stats["challenges"]["millionaire"] == {"gamesPlayed": 0}
    assert stats["global"] == {"participants": 2, "gamesPlayed": 1}
    # SpecArena answers the bare list of profiles.
    assert sorted(users, key=lambda u: u["userId"]) == sorted(
        [{"userId": alice.keys.user_id}, {"userId": bob.keys.user_id}], key=lambda u: u["userId"]
    )
    assert list(batch) == [alice.keys.user_id]
    assert [c["id"] for c in games["challenges"]] == [game] and games["total"] == 1
    assert set(games["profiles"]) == {alice.keys.user_id, bob.keys.user_id}
    assert set(scores["challenges"]["psi"]) == {"average", "win-rate", "red-team", "consecutive"}
    assert scores["global"]["gamesPlayed"] == 1
    assert client.get("/api/users/nobody").status_code == 404
    assert client.get("/api/users/batch").status_code == 400
    assert client.get("/api/scoring/chess").status_code == 404


def test_it_paginates_session_lists():
    for _ in range(3):
        create_session(Client(), "psi")

    page = Client().get("/api/challenges", {"limit": "2", "offset": "1"}).json()

    assert (page["total"], page["limit"], page["offset"]) == (3, 2, 1)
    assert len(page["challenges"]) == 2
    assert Client().get("/api/challenges", {"limit": "500"}).json()["limit"] == 100
    assert Client().get("/api/challenges", {"limit": "lots"}).status_code == 400
    assert Client().get("/api/challenges", {"status": "weird"}).status_code == 400
