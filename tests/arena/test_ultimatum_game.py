"""Ultimatum over HTTP: turns, offers, a deal's surplus, and the deadlock at the round limit."""

import pytest

from redblue.models import ArenaSession
from tests.arena.conftest import final_state, start_game

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("arena_auth")]


def set_reservations(challenge_id: str, values: list[int]) -> None:
    session = ArenaSession.objects.get(pk=challenge_id)
    session.game_state = {**session.game_state, "reservationValues": values}
    session.save()


def test_it_pays_each_player_its_share_above_its_reservation_on_a_deal():
    session, (alice, bob) = start_game("ultimatum")
    set_reservations(session["id"], [20, 30])

    assert alice.send("submit_offer", "60 40").status_code == 200
    # An empty content is a call like any other (SpecArena's schema takes any string).
    assert bob.send("accept", "").status_code == 200

    state = final_state(session["id"])
    assert state["status"] == "ended"
    assert state["scores"] == [{"security": 0, "utility": 0.4}, {"security": 0, "utility": 0.1}]


def test_it_refuses_moves_out_of_turn_and_bad_offers():
    session, (alice, bob) = start_game("ultimatum")

    assert bob.send("pass", "-").json()["code"] == "NOT_YOUR_TURN"
    assert alice.send("accept", "ok").json()["code"] == "NO_OFFER"
    assert alice.send("reject", "no").json()["code"] == "NO_OFFER"
    assert alice.send("submit_offer", "100").json()["code"] == "INVALID_OFFER"
    assert alice.send("submit_offer", "70 40").json()["code"] == "INVALID_OFFER_SUM"
    assert alice.send("submit_offer", "-10 110").json()["code"] == "NEGATIVE_AMOUNT"
    assert alice.send("submit_offer", "50 50").status_code == 200
    assert bob.send("reject", "no").status_code == 200
    assert alice.send("submit_offer", "90 10").status_code == 200
    assert bob.send("submit_offer", "10 90").status_code == 200
    assert alice.send("accept", "fine").status_code == 200
    assert ArenaSession.objects.get(pk=session["id"]).status == "ended"


def test_it_ends_in_a_deadlock_with_zero_for_everyone_after_the_round_limit():
    session, (alice, bob) = start_game("ultimatum")

    for _ in range(10):
        assert alice.send("pass", "pass").status_code == 200
        assert bob.send("pass", "pass").status_code == 200

    state = final_state(session["id"])
    assert state["status"] == "ended"
    assert state["scores"] == [{"security": 0, "utility": 0}, {"security": 0, "utility": 0}]
    assert alice.send("pass", "again").json() == {"ok": "Message sent"}
    assert alice.sync()[-1]["content"] == "ERR_GAME_NOT_RUNNING: Game not running."


def test_it_refuses_accepting_ones_own_offer():
    session, (alice, bob) = start_game("ultimatum")
    alice.send("submit_offer", "50 50")
    bob.send("pass", "thinking")

    assert alice.send("accept", "mine").json()["code"] == "CANNOT_ACCEPT_OWN"
