"""Dining cryptographers over HTTP: invites shared once seated, every utility branch, and
the payer's security lost only when every diner names them."""

import pytest

from redblue.models import ArenaSession
from tests.arena.conftest import final_state, start_game

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("arena_auth")]


def set_payer(challenge_id: str, payer) -> None:
    session = ArenaSession.objects.get(pk=challenge_id)
    session.game_state = {**session.game_state, "payer": payer}
    session.save()


def test_it_tells_each_diner_the_others_invites_once_all_are_seated():
    session, agents = start_game("dining-cryptographers")

    for agent in agents:
        mine = [m["content"] for m in agent.sync() if m["to"] == agent.invite]
        others = [a.invite for a in agents if a is not agent]
        assert mine[0] in ("You paid the bill.", "You did not pay the bill.")
        assert mine[1] == f"The other diners are: {', '.join(others)}."


def test_it_scores_a_named_payer_and_costs_them_security_when_all_name_them():
    session, (a, b, c) = start_game("dining-cryptographers")
    set_payer(session["id"], 1)

    for agent in (a, b, c):
        assert agent.send("guess", b.invite).status_code == 200

    state = final_state(session["id"])
    assert state["scores"] == [
        {"security": 1, "utility": 1},
        {"security": -1, "utility": 1},
        {"security": 1, "utility": 1},
    ]
    assert {(x["from"], x["to"]) for x in state["attributions"]} == {
        (a.invite, b.invite),
        (c.invite, b.invite),
    }


def test_it_scores_internal_unknown_and_wrong_guesses_when_a_diner_paid():
    session, (a, b, c) = start_game("dining-cryptographers")
    set_payer(session["id"], 0)

    a.send("guess", "internal")
    b.send("guess", "unknown")
    c.send("guess", "external")

    state = final_state(session["id"])
    assert [s["utility"] for s in state["scores"]] == [1, 0, -1]
    assert [s["security"] for s in state["scores"]] == [1, 1, 1]
    assert state["attributions"] == []


def test_it_scores_an_outsider_payment():
    session, (a, b, c) = start_game("dining-cryptographers")
    set_payer(session["id"], "external")

    a.send("guess", "external")
    b.send("guess", "internal")
    c.send("guess", a.invite)

    assert [s["utility"] for s in final_state(session["id"])["scores"]] == [1, -1, -1]


def test_it_refuses_an_invalid_or_second_guess():
    _, (a, _, _) = start_game("dining-cryptographers")

    assert a.send("guess", "the waiter").json()["code"] == "INVALID_GUESS"
    assert a.send("guess", "unknown").status_code == 200
    assert a.send("guess", "external").json()["code"] == "DUPLICATE_GUESS"
