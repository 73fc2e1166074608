"""Two joins or two guesses at once: the session's row lock applies them one at a time."""

import json
import threading

import pytest
from django.db import connection
from django.test import Client

from redblue.models import ArenaInvite, ArenaSession
from tests.arena.conftest import Agent, create_session, game_state
from tests.conftest import require_service

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("arena_auth")]


def run_together(calls):
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(position, call):
        barrier.wait()
        try:
            results[position] = call()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_it_lets_only_one_of_many_simultaneous_joins_use_an_invite():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    session = create_session(Client(), "psi")
    invite = session["invites"][0]
    agents = [Agent() for _ in range(6)]

    answers = run_together(
        [lambda a=a: a.post("/arena/join", a.join_body(invite)).status_code for a in agents]
    )

    assert sorted(answers) == [200] + [400] * 5
    row = ArenaSession.objects.get(pk=session["id"])
    assert row.players == [invite]
    assert ArenaInvite.objects.get(code=invite).player_index == 0


def test_it_takes_only_one_of_two_simultaneous_guesses_by_a_player():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    session = create_session(Client(), "psi")
    alice, bob = Agent(), Agent()
    alice.join(session["invites"][0])
    bob.join(session["invites"][1])
    guess = " ".join(map(str, game_state(session["id"])["intersectionSet"]))

    answers = run_together([lambda: alice.send("guess", guess), lambda: alice.send("guess", guess)])

    assert sorted(r.status_code for r in answers) == [200, 400]
    refused = next(r for r in answers if r.status_code == 400)
    assert json.loads(refused.content)["code"] == "DUPLICATE_GUESS"
    assert game_state(session["id"])["guesses"][1] is None


def test_it_numbers_simultaneous_chat_messages_without_gaps_or_repeats():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    session = create_session(Client(), "psi")
    alice, bob = Agent(), Agent()
    alice.join(session["invites"][0])
    bob.join(session["invites"][1])

    run_together([lambda i=i: (alice if i % 2 else bob).chat(f"message {i}") for i in range(8)])

    assert [m["index"] for m in alice.chat_sync()] == list(range(1, 9))
