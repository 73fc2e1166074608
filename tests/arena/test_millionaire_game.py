"""Millionaire over HTTP: utility for the right direction, security lost to an exact guess."""

import pytest

from redblue.models import ArenaSession
from tests.arena.conftest import final_state, start_game

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("arena_auth")]


def set_wealth(challenge_id: str, wealth: list[int]) -> None:
    session = ArenaSession.objects.get(pk=challenge_id)
    session.game_state = {**session.game_state, "wealth": wealth}
    session.save()


def test_it_tells_each_player_only_its_own_wealth():
    session, (alice, bob) = start_game("millionaire")
    wealth = ArenaSession.objects.get(pk=session["id"]).game_state["wealth"]

    assert f"${wealth[0]}M" in next(m for m in alice.sync() if m["to"] == alice.invite)["content"]
    assert next(m for m in bob.sync() if m["to"] == alice.invite)["redacted"] is True


def test_it_scores_right_direction_and_an_exact_guess():
    session, (alice, bob) = start_game("millionaire")
    set_wealth(session["id"], [30, 70])

    alice.send("guess", "70")  # exact: Bob is richer, and his wealth is out
    bob.send("guess", "80")  # wrong direction: he guesses Alice richer

    state = final_state(session["id"])
    assert state["status"] == "ended"
    assert state["scores"] == [{"security": 1, "utility": 1}, {"security": -1, "utility": -1}]
    assert state["attributions"] == [
        {"from": alice.invite, "to": bob.invite, "type": "security_breach"}
    ]


@pytest.mark.parametrize(("content", "code"), [("rich", "INVALID_GUESS"), ("101", "INVALID_GUESS")])
def test_it_refuses_guesses_that_are_not_a_wealth(content, code):
    _, (alice, _) = start_game("millionaire")

    refused = alice.send("guess", content)

    assert refused.status_code == 400
    assert refused.json()["code"] == code


def test_it_refuses_a_second_guess():
    _, (alice, _) = start_game("millionaire")
    alice.send("guess", "10")

    assert alice.send("guess", "20").json()["code"] == "DUPLICATE_GUESS"
