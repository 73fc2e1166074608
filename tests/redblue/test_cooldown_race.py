"""Issue #28.3 on PostgreSQL: a player's parallel first attacks never pair twice with one
defence inside the cooldown. Each thread is a client with its own token and connection."""

import threading
import time

import pytest
from django.db import connection, transaction
from django.db.models import Count

from redblue.models import TeamPairing, TeamSubmission
from tests.conftest import client_for, require_service
from tests.factories import make_workspace
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE, Player, make_red_blue

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
PARALLEL = 8  # the bursts; DB_POOL_SIZE is 8 too
HELD = 6  # while the test holds a connection of its own, with one to spare
BURSTS = 12
COOLDOWN = 3600


def clients_of(attacker: Player, count: int = PARALLEL) -> list:
    return [client_for(attacker.account) for _ in range(count)]


def fire(clients: list, challenge) -> tuple[list[threading.Thread], list[int]]:
    """One player's first attacks, one per client, all at once: the threads, and the
    status codes they fill in."""
    start = threading.Barrier(len(clients))
    codes: list[int] = []

    def run(client) -> None:
        try:
            start.wait()
            response = client.post(
                f"/web/api/red-blue-challenges/{challenge.id}/submit",
                {"team": "red", "prompt": ROLEPLAY_ATTACK},
                format="json",
            )
            codes.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    return threads, codes


def join(threads) -> None:
    for thread in threads:
        thread.join(timeout=120)


def pairings_per_defence(challenge, attacker: Player) -> dict:
    return dict(
        TeamPairing.objects.filter(
            red_blue_challenge=challenge,
            attack_submission__end_user=attacker.end_user(challenge),
            triggered_by="red",
        )
        .values_list("defense_submission_id")
        .annotate(n=Count("id"))
    )


def duel(name: str, defenders: int = 1):
    """A challenge with a cooldown, `defenders` defences already paired (a scout's attack
    claimed them, so a new attack picks one by policy), and an attacker yet to attack."""
    challenge = make_red_blue(workspace=make_workspace(name), pair_cooldown_seconds=COOLDOWN)
    for n in range(defenders):
        Player(f"{name}-defender-{n}").submit(challenge, "blue", WEAK_DEFENSE)
    Player(f"{name}-scout").submit(challenge, "red", ROLEPLAY_ATTACK)
    return challenge, Player(f"{name}-attacker")


def waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        # Inside a transaction PostgreSQL keeps the first snapshot of the statistics.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def test_parallel_first_attacks_held_at_the_defence_pair_with_it_once():
    """Every attack is held, by a row lock on the defence, after it chose its opponent and
    before it commits: the widest the race can be. Only one may have chosen it."""
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    challenge, attacker = duel("held")
    defence = TeamSubmission.objects.get(red_blue_challenge=challenge, team="blue")

    clients = clients_of(attacker, HELD)

    threads: list[threading.Thread] = []
    try:
        with transaction.atomic():
            TeamSubmission.objects.select_for_update().get(pk=defence.pk)
            threads, codes = fire(clients, challenge)
            deadline = time.monotonic() + 60
            while waiting_on_locks() < HELD and time.monotonic() < deadline:
                time.sleep(0.05)
            assert waiting_on_locks() == HELD
    finally:
        join(threads)  # even when the wait failed: no request may outlive the test

    assert sorted(codes) == [201] + [429] * (HELD - 1)
    assert pairings_per_defence(challenge, attacker) == {defence.pk: 1}
    assert (
        TeamSubmission.objects.filter(team="red", end_user__account=attacker.account).count() == 1
    )


@pytest.mark.parametrize("defenders", [1, 2])
def test_bursts_of_parallel_first_attacks_never_pair_twice_with_a_defence(defenders):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    for burst in range(BURSTS):
        challenge, attacker = duel(f"burst-{defenders}-{burst}", defenders)

        clients = clients_of(attacker)
        connection.close()  # back to the pool: each of the PARALLEL threads gets one

        threads, codes = fire(clients, challenge)
        join(threads)

        assert sorted(codes) == [201] * defenders + [429] * (PARALLEL - defenders), burst
        per_defence = pairings_per_defence(challenge, attacker)
        assert sorted(per_defence.values()) == [1] * defenders, burst
