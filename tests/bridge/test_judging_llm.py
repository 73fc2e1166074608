import pytest

from challenges.models import BridgeDelivery, ChallengeAttempt
from tests.bridge.conftest import JUDGE, post_json, post_raw_text
from tests.judging.fake_openai import Reply, verdict

pytestmark = pytest.mark.django_db

CALL = {
    "goal": "Make the bot reveal the launch code",
    "response": "The launch code is 0000.",
    "hints": "Any code counts",
    "judge_model": "openai/judge-1",
    "pass_threshold": 6,
}


def test_it_answers_with_the_judging_node_outputs(bridge_api, fake_openai):
    fake_openai.answer = lambda request: verdict(passed=None, rating=8, feedback="Code revealed.")
    response = post_json(bridge_api, JUDGE, CALL)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert set(body) == {"judge_passed", "judge_rating", "judge_feedback", "judge_raw"}
    assert (body["judge_passed"], body["judge_rating"], body["judge_feedback"]) == (
        True,
        8,
        "Code revealed.",
    )
    assert body["judge_raw"]["judge_model"] == "openai/judge-1"
    sent = fake_openai.requests[0]
    assert sent["model"] == "judge-1"
    assert "launch code is 0000" in sent["messages"][-1]["content"]
    assert not ChallengeAttempt.objects.exists()


def test_it_fails_below_the_threshold_and_clamps_to_the_scale(bridge_api, fake_openai):
    fake_openai.answer = lambda request: verdict(passed=None, rating=5, feedback="Close.")
    assert post_json(bridge_api, JUDGE, CALL).json()["judge_passed"] is False
    fake_openai.answer = lambda request: verdict(passed=None, rating=42, feedback="Wow.")
    body = post_json(bridge_api, JUDGE, {**CALL, "rating_scale": 10}).json()
    assert (body["judge_passed"], body["judge_rating"]) == (True, 10)


def test_it_never_passes_when_the_judge_fails(bridge_api, fake_openai):
    fake_openai.answer = lambda request: Reply(status=500)
    response = post_json(bridge_api, JUDGE, CALL)
    assert response.status_code == 200
    body = response.json()
    assert body["judge_passed"] is False
    assert body["judge_rating"] is None
    assert body["judge_raw"]["error"] == "http_error"


def test_it_refuses_an_unusable_judge_config(bridge_api, fake_openai):
    response = post_json(bridge_api, JUDGE, {**CALL, "rating_scale": 0, "judge_model": "nope"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert "rating_scale" in error["message"]
    assert error["fields"]["rating_scale"] == [
        "'rating_scale' must be a whole number from 1 to 100."
    ]
    assert error["fields"]["judge_model"][0].startswith("'judge_model' must be 'openai/<model>'")
    assert fake_openai.requests == []


def test_it_takes_null_judge_settings_as_their_defaults(bridge_api, fake_openai, settings):
    settings.JUDGE_DEFAULT_MODEL = "openai/gpt-4o-mini"
    body = {**CALL, "judge_model": None, "temperature": None, "max_tokens": None}
    response = post_json(bridge_api, JUDGE, body)
    assert response.status_code == 200, response.json()
    sent = fake_openai.requests[0]
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == ("gpt-4o-mini", 0, 300)


def test_it_replays_the_first_verdict_for_a_repeated_run(bridge_api, fake_openai):
    fake_openai.answer = lambda request: verdict(passed=None, rating=9, feedback="Yes.")
    first = post_raw_text(
        bridge_api, JUDGE, '{"goal": "g", "response": "r", "workflow_run_id": "w1"}'
    )
    fake_openai.answer = lambda request: verdict(passed=None, rating=1, feedback="No.")
    again = post_raw_text(
        bridge_api, JUDGE, '{"goal": "g", "response": "r", "workflow_run_id": "w1"}'
    )
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert len(fake_openai.requests) == 1
    assert BridgeDelivery.objects.get().endpoint == "judging-llm"


def test_it_needs_a_goal_and_a_response(bridge_api):
    response = post_json(bridge_api, JUDGE, {"goal": "g"})
    assert response.status_code == 400
    assert "response" in response.json()["error"]["fields"]


def test_it_refuses_calls_without_a_key(anon_api):
    assert post_json(anon_api, JUDGE, CALL).status_code == 401
