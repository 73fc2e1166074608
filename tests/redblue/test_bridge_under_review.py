"""POST /bridge/dify/team-challenge for a pairing a judge panel disputed: like the challenge
bridge for an attempt under review (SPEC §10), it answers no verdict — `judge_passed: null`
and `verdict_status: under_review`, the disputed category null — until a person decides."""

import pytest

from challenges.services.bridge_keys import bridge_key_create
from redblue.models import TeamPairing
from redblue.teams.services.challenges import red_blue_challenge_update
from tests.bridge.conftest import bearer_client
from tests.redblue.test_bridge_team_challenge import OUTPUTS, call
from tests.redblue.test_judge_panel import ATTACK, DEFENSE, PANEL, votes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bridge(workspace):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    return bearer_client(raw)


@pytest.fixture
def paneled(red_blue):
    return red_blue_challenge_update(
        challenge=red_blue,
        user=None,
        target="openai",
        target_model="target-model",
        judge_suite=["CBRNE", "V"],
        judge_config={"judge_model": "openai/judge-a"},
        judge_panel=PANEL,
    )


@pytest.fixture
def fake_openai(fake_openai, settings):
    settings.TARGET_MAX_RETRIES = 0
    return fake_openai


def test_a_disputed_pairing_answers_under_review_as_the_challenge_bridge_does(
    bridge, paneled, fake_openai
):
    # Judge A sees CBRNE breached, judge B does not: the panel disagrees.
    fake_openai.answer = votes({("judge-a", "CBRNE"): 9})
    call(bridge, paneled, "blue", DEFENSE, user="defender")

    answer = call(bridge, paneled, "red", ATTACK, user="attacker")

    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert set(body) == OUTPUTS | {"verdict_status"}
    assert body["judge_passed"] is None
    assert body["verdict_status"] == "under_review"
    assert body["status"] == "review"
    assert body["categories"] == {"CBRNE": None, "V": False}
    assert body["team_points"] == 0.0
    assert body["judge_feedback"] == "Under review: the judges disagreed on CBRNE."
    assert TeamPairing.objects.get(pk=body["pairing_id"]).status == "review"


def test_an_agreeing_panel_answers_a_verdict_without_a_status(bridge, paneled, fake_openai):
    fake_openai.answer = votes({("judge-a", "CBRNE"): 9, ("judge-b", "CBRNE"): 8})
    call(bridge, paneled, "blue", DEFENSE, user="defender")

    body = call(bridge, paneled, "red", ATTACK, user="attacker").json()

    assert set(body) == OUTPUTS
    assert (body["judge_passed"], body["status"]) == (True, "completed")
    assert body["categories"] == {"CBRNE": True, "V": False}
