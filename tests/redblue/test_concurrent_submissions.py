"""Races on PostgreSQL: concurrent attacks on one defence each count once, waiting
submissions are claimed once, and the standings equal the pairings' points exactly."""

import threading
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import Count, Sum

from redblue.models import TeamPairing, TeamStanding, TeamSubmission
from tests.conftest import require_service
from tests.factories import make_workspace
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE, Player, make_red_blue

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
SUBMISSIONS = 20


def all_at_once(calls) -> list:
    start = threading.Barrier(len(calls))
    answers: list = []

    def run(call) -> None:
        try:
            start.wait()
            answers.append(call())
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return answers


def standings_match_pairings(challenge) -> None:
    pairings = TeamPairing.objects.filter(red_blue_challenge=challenge, status="completed")
    totals = pairings.aggregate(red=Sum("red_points"), blue=Sum("blue_points"), n=Count("id"))
    sides = {
        row["team"]: row
        for row in TeamStanding.objects.filter(red_blue_challenge=challenge)
        .values("team")
        .annotate(points=Sum("points"), pairings=Sum("pairings"))
    }
    assert sides["red"]["points"] == totals["red"]
    assert sides["blue"]["points"] == totals["blue"]
    assert sides["red"]["pairings"] == sides["blue"]["pairings"] == totals["n"]


def test_twenty_concurrent_attacks_on_one_defence_each_count_once():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    challenge = make_red_blue(workspace=make_workspace("Race"))
    defender = Player("race-defender")
    defender.submit(challenge, "blue", WEAK_DEFENSE)
    attackers = [Player(f"race-attacker-{n}") for n in range(SUBMISSIONS)]
    for attacker in attackers:
        attacker.end_user(challenge)

    answers = all_at_once(
        [lambda a=a: a.submit(challenge, "red", ROLEPLAY_ATTACK) for a in attackers]
    )
    assert sorted(answer.status_code for answer in answers) == [201] * SUBMISSIONS
    pairings = TeamPairing.objects.filter(red_blue_challenge=challenge)
    assert pairings.count() == SUBMISSIONS
    assert set(pairings.values_list("status", flat=True)) == {"completed"}
    blue = TeamStanding.objects.get(red_blue_challenge=challenge, team="blue")
    assert (blue.points, blue.pairings) == (Decimal(5 * SUBMISSIONS), SUBMISSIONS)
    assert TeamStanding.objects.filter(team="red").aggregate(p=Sum("points"))["p"] == Decimal(
        3 * SUBMISSIONS
    )
    standings_match_pairings(challenge)
    board = defender.api.get(f"/web/api/red-blue-challenges/{challenge.id}/leaderboard").json()
    assert board["pairings_completed"] == SUBMISSIONS
    assert (board["red"]["points"], board["blue"]["points"]) == (60.0, 100.0)


def test_concurrent_defences_claim_each_waiting_attack_once():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    challenge = make_red_blue(workspace=make_workspace("Claims"))
    for n in range(SUBMISSIONS // 2):
        Player(f"waiting-attacker-{n}").submit(challenge, "red", ROLEPLAY_ATTACK)
    assert TeamSubmission.objects.filter(status="waiting").count() == SUBMISSIONS // 2
    defenders = [Player(f"claim-defender-{n}") for n in range(SUBMISSIONS // 2)]
    for defender in defenders:
        defender.end_user(challenge)

    answers = all_at_once(
        [lambda d=d: d.submit(challenge, "blue", WEAK_DEFENSE) for d in defenders]
    )
    assert sorted(answer.status_code for answer in answers) == [201] * (SUBMISSIONS // 2)
    assert not TeamSubmission.objects.filter(status="waiting").exists()
    claimed = TeamPairing.objects.filter(red_blue_challenge=challenge)
    pairs = list(claimed.values_list("attack_submission_id", "defense_submission_id"))
    assert len(pairs) == len(set(pairs))  # every attack met every defence at most once
    assert set(claimed.values_list("status", flat=True)) == {"completed"}
    standings_match_pairings(challenge)


def test_concurrent_deliveries_of_one_bridge_run_write_one_submission():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    import json

    from challenges.services.bridge_keys import bridge_key_create
    from tests.bridge.conftest import bearer_client

    workspace = make_workspace("Bridge race")
    challenge = make_red_blue(workspace=workspace)
    Player("bridge-defender").submit(challenge, "blue", WEAK_DEFENSE)
    _, raw = bridge_key_create(workspace=workspace)
    body = json.dumps(
        {
            "red_blue_challenge_id": str(challenge.id),
            "team_choice": "red",
            "attack_prompt": ROLEPLAY_ATTACK,
            "user": "dify-racer",
            "workflow_run_id": "run-race",
        }
    )

    def deliver():
        return bearer_client(raw).post(
            "/bridge/dify/team-challenge", body, content_type="text/plain"
        )

    answers = all_at_once([deliver for _ in range(10)])
    done = [answer.json() for answer in answers if answer.status_code == 200]
    busy = [answer for answer in answers if answer.status_code == 409]
    assert len(done) + len(busy) == 10
    assert done and all(answer == done[0] for answer in done)
    assert all(answer.json()["error"]["code"] == "in_progress" for answer in busy)
    assert TeamSubmission.objects.filter(workflow_run_id="run-race").count() == 1
    assert TeamPairing.objects.filter(red_blue_challenge=challenge).count() == 1
    assert deliver().json() == done[0]
    standings_match_pairings(challenge)
