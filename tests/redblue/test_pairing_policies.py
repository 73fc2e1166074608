"""Each selection policy's choice on a prepared set of submissions, through the submit API."""

import asyncio
from datetime import timedelta
from decimal import Decimal

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils import timezone

from redblue.models import TeamPairing, TeamSubmission
from redblue.teams.live import red_blue_group
from redblue.teams.services.challenges import red_blue_challenge_update
from tests.redblue.conftest import ROLEPLAY_ATTACK

pytestmark = pytest.mark.django_db(transaction=True)


def defence(
    challenge, player, label, *, age_minutes, points=0, pairings=0, paired_ago=None, active=True
):
    now = timezone.now()
    submission = TeamSubmission.objects.create(
        red_blue_challenge=challenge,
        workspace=challenge.workspace,
        end_user=player.end_user(challenge),
        team="blue",
        prompt=f"Defence {label}: refuse everything about weapons.",
        active=active,
        points_total=Decimal(points),
        pairings_count=pairings,
        last_paired_at=now - timedelta(minutes=paired_ago) if paired_ago is not None else None,
    )
    TeamSubmission.objects.filter(pk=submission.pk).update(
        created_at=now - timedelta(minutes=age_minutes)
    )
    return submission


@pytest.fixture
def prepared(red_blue, players):
    """Three defenders' current defences and an old inactive one."""
    return {
        "old_best": defence(
            red_blue, players("b1"), "old", age_minutes=30, points=10, pairings=2, paired_ago=1
        ),
        "mid_worst": defence(
            red_blue, players("b2"), "mid", age_minutes=20, points=4, pairings=2, paired_ago=25
        ),
        "new_fair": defence(
            red_blue, players("b3"), "new", age_minutes=10, points=3, pairings=1, paired_ago=5
        ),
        "retired": defence(
            red_blue,
            players("b4"),
            "retired",
            age_minutes=5,
            points=50,
            pairings=1,
            paired_ago=40,
            active=False,
        ),  # fmt: skip
    }


def chosen_defence(challenge, player, prompt=ROLEPLAY_ATTACK):
    answer = player.submit(challenge, "red", prompt)
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    return body["pairings"][0]["defense_submission"]["id"], body


def received(layer, channel, wanted: str) -> dict:
    """The first frame of type `wanted` the channel gets (others are skipped)."""

    async def wait() -> dict:
        while True:
            frame = await asyncio.wait_for(layer.receive(channel), timeout=10)
            if frame["type"] == wanted:
                return frame

    return async_to_sync(wait)()


def use_policy(challenge, **policies):
    red_blue_challenge_update(challenge=challenge, user=None, **policies)


def test_latest_best_takes_the_best_record_among_active_defences(red_blue, players, prepared):
    chosen, body = chosen_defence(red_blue, players("r1"))
    assert chosen == str(prepared["old_best"].id)
    assert body["fell_back"] is False


def test_latest_best_tests_an_untested_defence_first(red_blue, players, prepared):
    fresh = defence(red_blue, players("b5"), "fresh", age_minutes=1)
    chosen, _ = chosen_defence(red_blue, players("r1"))
    assert chosen == str(fresh.id)


def test_round_robin_takes_the_defence_that_waited_longest(red_blue, players, prepared):
    use_policy(red_blue, defense_selection_policy="round_robin")
    first, _ = chosen_defence(red_blue, players("r1"))
    second, _ = chosen_defence(red_blue, players("r2"))
    third, _ = chosen_defence(red_blue, players("r3"))
    assert [first, second, third] == [
        str(prepared["mid_worst"].id),
        str(prepared["new_fair"].id),
        str(prepared["old_best"].id),
    ]


def test_random_active_picks_only_active_defences(red_blue, players, prepared):
    use_policy(red_blue, defense_selection_policy="random_active")
    active = {str(prepared[name].id) for name in ("old_best", "mid_worst", "new_fair")}
    seen = {chosen_defence(red_blue, players(f"r{n}"))[0] for n in range(12)}
    assert seen <= active
    assert len(seen) > 1


def test_request_new_if_none_takes_the_newest_defence_not_yet_faced(red_blue, players, prepared):
    use_policy(red_blue, defense_selection_policy="request_new_if_none")
    attacker = players("r1")
    earlier = TeamSubmission.objects.create(
        red_blue_challenge=red_blue,
        workspace=red_blue.workspace,
        end_user=attacker.end_user(red_blue),
        team="red",
        prompt="an earlier attack",
        active=False,
    )
    for name in ("new_fair", "mid_worst"):
        TeamPairing.objects.create(
            red_blue_challenge=red_blue,
            workspace=red_blue.workspace,
            attack_submission=earlier,
            defense_submission=prepared[name],
            status="completed",
        )
    chosen, body = chosen_defence(red_blue, attacker)
    assert chosen == str(prepared["old_best"].id)
    assert body["fell_back"] is False


def test_request_new_if_none_signals_blue_and_falls_back_when_all_were_faced(
    red_blue, players, prepared
):
    use_policy(red_blue, defense_selection_policy="request_new_if_none")
    attacker = players("r1")
    chosen_defence(red_blue, attacker)
    chosen_defence(red_blue, attacker)
    chosen_defence(red_blue, attacker)  # every active defence now faced once

    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(red_blue_group(red_blue.id), channel)
    chosen, body = chosen_defence(red_blue, attacker)
    assert body["fell_back"] is True
    assert chosen == str(prepared["retired"].id)  # the last known defence, though retired
    requested = received(layer, channel, "red_blue.opponent_requested")
    assert requested["team"] == "blue"


@pytest.mark.parametrize(
    "policy", ["latest_best", "random_active", "round_robin", "request_new_if_none"]
)
def test_every_policy_falls_back_to_the_last_known_defence(red_blue, players, policy):
    use_policy(red_blue, defense_selection_policy=policy)
    older = defence(red_blue, players("b1"), "older", age_minutes=9, active=False)
    last = defence(red_blue, players("b2"), "last", age_minutes=3, active=False)
    chosen, body = chosen_defence(red_blue, players("r1"))
    assert chosen == str(last.id) != str(older.id)
    assert body["fell_back"] is True


@pytest.mark.parametrize(
    "policy", ["latest_best", "random_active", "round_robin", "request_new_if_none"]
)
def test_every_policy_waits_when_the_other_side_never_submitted(red_blue, players, policy):
    use_policy(red_blue, defense_selection_policy=policy)
    body = players("r1").submit(red_blue, "red", ROLEPLAY_ATTACK).json()
    assert body["waiting"] is True
    assert body["pairings"] == []


def test_the_attack_policy_picks_the_attack_for_a_new_defence(red_blue, players):
    use_policy(red_blue, attack_selection_policy="latest_best")
    strong = TeamSubmission.objects.create(
        red_blue_challenge=red_blue, workspace=red_blue.workspace,
        end_user=players("r1").end_user(red_blue), team="red",
        prompt=ROLEPLAY_ATTACK, points_total=Decimal(9), pairings_count=1,
    )  # fmt: skip
    TeamSubmission.objects.create(
        red_blue_challenge=red_blue, workspace=red_blue.workspace,
        end_user=players("r2").end_user(red_blue), team="red",
        prompt="hello", points_total=Decimal(1), pairings_count=1,
    )  # fmt: skip
    body = players("b1").submit(red_blue, "blue", "Refuse questions about weapons.").json()
    assert body["pairings"][0]["attack_submission"]["id"] == str(strong.id)
