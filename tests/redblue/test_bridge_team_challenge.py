"""POST /bridge/dify/team-challenge: the seed's outputs, judged within the request,
idempotent on workflow_run_id."""

import json

import pytest

from challenges.models import BridgeDelivery
from challenges.services.bridge_keys import bridge_key_create
from redblue.models import TeamPairing, TeamStanding, TeamSubmission
from tests.bridge.conftest import bearer_client, post_json, post_raw_text, run_id
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE, make_red_blue

TEAM = "/bridge/dify/team-challenge"
OUTPUTS = {
    "team", "judge_passed", "judge_rating", "judge_feedback", "categories", "team_points",
    "total_points", "status", "submission_id", "pairing_id",
}  # fmt: skip

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bridge(workspace):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    return bearer_client(raw)


def call(bridge, challenge, team, prompt, *, user="dify-user", run=None):
    field = "attack_prompt" if team == "red" else "defense_prompt"
    return post_json(
        bridge,
        TEAM,
        {
            "red_blue_challenge_id": str(challenge.id),
            "team_choice": team,
            field: prompt,
            "user": user,
            "workflow_run_id": run or run_id(),
        },
    )


def test_a_defence_with_nobody_to_face_waits(bridge, red_blue):
    answer = call(bridge, red_blue, "blue", WEAK_DEFENSE, user="defender")
    assert answer.status_code == 200
    body = answer.json()
    assert set(body) == OUTPUTS
    assert body["status"] == "waiting"
    assert body["team"] == "blue"
    assert body["judge_passed"] is False
    assert body["categories"] == {}
    assert (body["team_points"], body["total_points"]) == (0.0, 0.0)


def test_an_attack_is_judged_within_the_request(bridge, red_blue):
    call(bridge, red_blue, "blue", WEAK_DEFENSE, user="defender")
    body = call(bridge, red_blue, "red", ROLEPLAY_ATTACK, user="attacker").json()
    assert body["status"] == "completed"
    assert body["team"] == "red"
    assert body["judge_passed"] is True
    assert body["judge_rating"] == 6
    assert body["categories"] == {
        "CBRNE": True, "SA": False, "SH": False, "RWH": False, "V": False, "M": False,
    }  # fmt: skip
    assert body["team_points"] == 3.0
    assert body["total_points"] == 3.0
    assert "CBRNE" in body["judge_feedback"]
    pairing = TeamPairing.objects.get(pk=body["pairing_id"])
    assert pairing.status == "completed"
    assert pairing.attack_submission.source == "bridge"

    # The attack broke a defence, so it joined the regression set: a new defence is first
    # run against it (a task, eager here) and counts once it holds (docs/redblue.md).
    defender = call(bridge, red_blue, "blue", WEAK_DEFENSE + " Never pretend.", user="defender")
    body = defender.json()
    assert body["team"] == "blue"
    assert body["status"] == "checking"
    assert body["judge_passed"] is False
    assert body["pairing_id"] is None
    submission = TeamSubmission.objects.get(pk=body["submission_id"])
    assert submission.status == "paired"
    assert submission.regression_report == {"checked": 1, "passed": True, "failures": []}
    # It held against the roleplay attack in its pairing too.
    blue = TeamStanding.objects.get(team="blue")
    assert blue.points == 11


def test_a_repeated_run_replays_the_first_answer_and_writes_nothing(bridge, red_blue):
    call(bridge, red_blue, "blue", WEAK_DEFENSE, user="defender")
    run = run_id()
    first = call(bridge, red_blue, "red", ROLEPLAY_ATTACK, user="attacker", run=run)
    counts = (TeamSubmission.objects.count(), TeamPairing.objects.count())
    again = call(bridge, red_blue, "red", ROLEPLAY_ATTACK, user="attacker", run=run)
    assert again.status_code == 200
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert (TeamSubmission.objects.count(), TeamPairing.objects.count()) == counts
    assert BridgeDelivery.objects.filter(endpoint="team-challenge").count() == 2
    red = TeamStanding.objects.get(team="red")
    assert (red.points, red.pairings) == (3, 1)


def test_it_takes_dify_raw_text_bodies(bridge, red_blue):
    body = json.dumps(
        {
            "red_blue_challenge_id": str(red_blue.id),
            "team_choice": "blue",
            "defense_prompt": 'Say "no" to\nweapons \\ always.',
            "user": "u1",
            "workflow_run_id": run_id(),
        }
    )
    assert post_raw_text(bridge, TEAM, body).status_code == 200


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"team_choice": "red"}, "attack_prompt"),
        ({"team_choice": "blue", "attack_prompt": "x"}, "defense_prompt"),
        ({"team_choice": "purple", "attack_prompt": "x"}, "team_choice"),
        ({"team_choice": "red", "attack_prompt": "x", "workflow_run_id": None}, "workflow_run_id"),
    ],
)
def test_bad_calls_get_a_400_naming_the_field(bridge, red_blue, payload, field):
    body = {
        "red_blue_challenge_id": str(red_blue.id),
        "user": "u1",
        "workflow_run_id": run_id(),
        **payload,
    }
    body = {key: value for key, value in body.items() if value is not None}
    answer = post_json(bridge, TEAM, body)
    assert answer.status_code == 400
    assert field in answer.json()["error"]["fields"]


def test_broken_json_gets_the_code_node_advice(bridge):
    answer = post_raw_text(bridge, TEAM, '{"user": "a "quoted" b"}')
    assert answer.status_code == 400
    assert "Code node" in answer.json()["error"]["message"]


def test_another_workspaces_challenge_is_not_found(bridge, other_workspace):
    theirs = make_red_blue(workspace=other_workspace)
    answer = call(bridge, theirs, "red", ROLEPLAY_ATTACK)
    assert answer.status_code == 404
    assert TeamSubmission.objects.count() == 0


def test_it_refuses_calls_without_a_key_and_account_users(client, bridge, red_blue):
    anonymous = client.post(TEAM, "{}", content_type="application/json")
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "not_authenticated"
    answer = call(bridge, red_blue, "red", ROLEPLAY_ATTACK, user="account:1")
    assert answer.status_code == 400


def test_banned_terms_are_refused_over_the_bridge_too(bridge, workspace):
    challenge = make_red_blue(workspace=workspace, banned_terms=["DAN"])
    answer = call(bridge, challenge, "red", ROLEPLAY_ATTACK)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "banned_term"
