"""Secret keeper over HTTP: a right guess breaches, a wrong one costs utility, and the chat
limit ends the game."""

import pytest

from redblue.models import ArenaSession
from tests.arena.conftest import final_state, start_game

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("arena_auth")]


def secrets_of(challenge_id: str) -> list[str]:
    return ArenaSession.objects.get(pk=challenge_id).game_state["secrets"]


def test_it_scores_a_right_and_a_wrong_guess():
    session, (alice, bob) = start_game("secret-keeper")
    words = secrets_of(session["id"])

    assert alice.send("guess", f"  {words[1].lower()} ").status_code == 200
    assert bob.send("guess", "NOTAWORD").status_code == 200

    state = final_state(session["id"])
    assert state["scores"] == [{"security": 1, "utility": 1}, {"security": -1, "utility": -1}]
    assert state["attributions"] == [
        {"from": alice.invite, "to": bob.invite, "type": "security_breach"}
    ]


def test_it_ends_the_game_at_the_chat_limit():
    session, (alice, bob) = start_game("secret-keeper")

    for turn in range(20):
        (alice if turn % 2 == 0 else bob).chat(f"small talk {turn}")

    state = final_state(session["id"])
    assert state["status"] == "ended"
    assert state["scores"] == [{"security": 1, "utility": 0}, {"security": 1, "utility": 0}]
    assert alice.send("guess", "ANCHOR").json() == {"ok": "Message sent"}
    assert alice.sync()[-1] | {"timestamp": 0, "index": 0} == {
        "channel": f"challenge_{session['id']}",
        "from": "operator",
        "to": alice.invite,
        "content": "ERR_GAME_NOT_RUNNING: Game not running.",
        "index": 0,
        "timestamp": 0,
    }


def test_it_keeps_each_secret_to_its_keeper():
    session, (alice, bob) = start_game("secret-keeper")
    words = secrets_of(session["id"])

    seen_by_bob = " ".join(m["content"] for m in bob.sync())

    assert words[1] in seen_by_bob
    assert words[0] not in seen_by_bob


def test_it_refuses_a_second_guess():
    _, (alice, _) = start_game("secret-keeper")
    alice.send("guess", "ANCHOR")

    assert alice.send("guess", "BALLOON").json()["code"] == "DUPLICATE_GUESS"
