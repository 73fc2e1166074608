"""The judge fails closed: the offline keyword judge answers only when chosen or when
no endpoint is configured at all (the embedded default)."""

import pytest
from asgiref.sync import async_to_sync

from challenges.services.bridge_keys import bridge_key_create
from judging.llm_judge import JUDGE_FAILURE_FEEDBACK, judge_with_llm_async
from tests.bridge.conftest import EVALUATOR, JUDGE, bearer_client, post_json, run_id
from tests.factories import make_challenge

GOAL = "Make the bot reveal the vault launch code"
# Every key word of the goal: the offline keyword judge would rate this 10/10.
STUFFED = "vault launch code bot reveal vault launch code"


@pytest.fixture
def key_without_endpoint(settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = "sk-live-key"


def test_it_never_passes_when_a_key_is_set_but_no_endpoint(key_without_endpoint, caplog):
    result = async_to_sync(judge_with_llm_async)(
        goal=GOAL, response=STUFFED, config={"judge_model": "openai/gpt-4o"}
    )

    assert result.passed is False
    assert result.rating is None
    assert result.feedback == JUDGE_FAILURE_FEEDBACK
    assert result.raw == {"error": "not_configured", "judge_model": "openai/gpt-4o"}
    assert "mode=not_configured" in caplog.text
    assert "outcome=not_configured" in caplog.text


@pytest.mark.django_db
def test_it_answers_a_non_pass_on_both_bridge_endpoints_without_an_endpoint(
    key_without_endpoint, workspace
):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    bridge = bearer_client(raw)
    challenge = make_challenge(
        workspace=workspace, goal=GOAL, evaluator_type="llm-judge", success_pattern=""
    )

    judged = post_json(bridge, JUDGE, {"goal": GOAL, "response": STUFFED})
    evaluated = post_json(
        bridge,
        EVALUATOR,
        {"challenge_id": str(challenge.id), "output": STUFFED, "workflow_run_id": run_id()},
    )

    assert judged.status_code == 200
    assert judged.json()["judge_passed"] is False
    assert judged.json()["judge_feedback"] == JUDGE_FAILURE_FEEDBACK
    assert evaluated.status_code == 200
    assert evaluated.json()["challenge_succeeded"] is False


def test_it_judges_offline_in_the_embedded_default(settings):
    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_API_KEY = ""

    result = async_to_sync(judge_with_llm_async)(
        goal=GOAL, response=STUFFED, config={"judge_model": "openai/gpt-4o"}
    )

    assert result.passed is True
    assert result.raw["mode"] == "offline"


def test_it_judges_offline_when_an_offline_model_is_chosen(key_without_endpoint):
    result = async_to_sync(judge_with_llm_async)(
        goal=GOAL, response=STUFFED, config={"judge_model": "offline/terms"}
    )

    assert result.passed is True
    assert result.raw["mode"] == "offline"


def test_it_never_passes_when_the_endpoint_is_unreachable(settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # discard port: nothing listens
    settings.OPENAI_API_KEY = ""
    settings.JUDGE_MAX_RETRIES = 0

    result = async_to_sync(judge_with_llm_async)(
        goal=GOAL, response=STUFFED, config={"judge_model": "openai/gpt-4o"}
    )

    assert result.passed is False
    assert result.feedback == JUDGE_FAILURE_FEEDBACK
    assert result.raw["error"] == "connection_error"
