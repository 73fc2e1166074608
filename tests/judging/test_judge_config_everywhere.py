"""One judge-config rule: what a challenge saves, the bridge and the judge all accept."""

import pytest
from asgiref.sync import async_to_sync

from challenges.models import Challenge
from challenges.services.bridge_keys import bridge_key_create
from judging.errors import JudgeConfigError
from judging.llm_judge import judge_with_llm_async
from tests.bridge.conftest import EVALUATOR, JUDGE, bearer_client, post_json, run_id
from tests.judging.fake_openai import verdict

pytestmark = pytest.mark.django_db

CHALLENGES = "/console/api/challenges"
MODEL_RULE = (
    "'judge_model' must be 'openai/<model>' (the endpoint in OPENAI_BASE_URL) or "
    "'offline/<name>' (the built-in stand-in judge), e.g. 'openai/gpt-4o-mini'."
)

REFUSED = [
    ("judge_model", "anthropic/claude-x", MODEL_RULE),
    ("judge_model", "gpt-4o-mini", MODEL_RULE),
    ("judge_model", "openai/", MODEL_RULE),
    ("judge_model", "openai/gpt 4o", MODEL_RULE),
    ("judge_model", "OpenAI/gpt-4o", MODEL_RULE),
    ("rating_scale", 0, "'rating_scale' must be a whole number from 1 to 100."),
    ("rating_scale", 7.5, "'rating_scale' must be a whole number from 1 to 100."),
    ("max_tokens", 100.0, "'max_tokens' must be a whole number from 1 to 32000."),
    ("max_tokens", True, "'max_tokens' must be a whole number from 1 to 32000."),
    ("temperature", "0.5", "'temperature' must be a number from 0 to 2."),
    ("pass_threshold", 11, "'pass_threshold' must be a number from 0 to the rating scale (10)."),
    (
        "rubric_prompt_template",
        "x" * 20_001,
        "'rubric_prompt_template' must be text of at most 20000 characters.",
    ),
]

ACCEPTED = [
    {"judge_model": "openai/judge-1"},
    {"judge_model": "openai/meta-llama/Llama-3.1-8B-Instruct", "temperature": 0.5},
    {"judge_model": "openai/llama3.1:8b", "max_tokens": 50, "rating_scale": 5},
    {"judge_model": "", "rating_scale": 4, "pass_threshold": 2.5},
    {"judge_model": None, "temperature": None, "rubric_prompt_template": ""},
]


@pytest.fixture
def bridge_api(workspace):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    return bearer_client(raw)


def save(creator_api, judge_config):
    return creator_api.post(
        CHALLENGES,
        {
            "name": "Judged",
            "goal": "Make the bot reveal the launch code",
            "evaluator_type": "llm-judge",
            "success_type": "contains",
            "judge_config": judge_config,
        },
        format="json",
    )


@pytest.mark.parametrize(("key", "value", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_it_refuses_a_judge_setting_everywhere_with_the_same_message(
    creator_api, bridge_api, workspace, fake_openai, key, value, message
):
    saved = save(creator_api, {key: value})
    assert saved.status_code == 400
    assert saved.json()["error"]["fields"]["judge_config"] == [message]
    assert not Challenge.objects.exists()

    bridged = post_json(bridge_api, JUDGE, {"goal": "g", "response": "r", key: value})
    assert bridged.status_code == 400
    assert bridged.json()["error"]["code"] == "invalid"
    assert bridged.json()["error"]["fields"] == {key: [message]}

    with pytest.raises(JudgeConfigError) as refused:
        async_to_sync(judge_with_llm_async)(goal="g", response="r", config={key: value})
    assert str(refused.value) == message

    # A row stored before the rule existed is refused when judged, with the same words.
    stored = save(creator_api, {})
    Challenge.objects.filter(id=stored.json()["id"]).update(judge_config={key: value})
    evaluated = post_json(
        bridge_api,
        EVALUATOR,
        {"challenge_id": stored.json()["id"], "output": "x", "workflow_run_id": run_id()},
    )
    assert evaluated.status_code == 422
    assert evaluated.json()["error"]["code"] == "judge_misconfigured"
    assert message in evaluated.json()["error"]["message"]
    assert fake_openai.requests == []


@pytest.mark.parametrize("judge_config", ACCEPTED)
def test_it_accepts_a_judge_config_everywhere_it_is_used(
    creator_api, bridge_api, fake_openai, judge_config
):
    fake_openai.answer = lambda request: verdict(passed=True, rating=5, feedback="Leaked.")

    saved = save(creator_api, judge_config)
    assert saved.status_code == 201, saved.json()

    evaluated = post_json(
        bridge_api,
        EVALUATOR,
        {"challenge_id": saved.json()["id"], "output": "code 0000", "workflow_run_id": run_id()},
    )
    assert evaluated.status_code == 200, evaluated.json()
    assert evaluated.json()["challenge_succeeded"] is True

    bridged = post_json(bridge_api, JUDGE, {"goal": "g", "response": "r", **judge_config})
    assert bridged.status_code == 200, bridged.json()
    assert bridged.json()["judge_passed"] is True

    expected_model = (judge_config.get("judge_model") or "openai/gpt-4o-mini").split("/", 1)[1]
    assert [request["model"] for request in fake_openai.requests] == [expected_model] * 2


def test_it_judges_an_offline_model_offline_even_with_an_endpoint(
    creator_api, bridge_api, fake_openai
):
    saved = save(creator_api, {"judge_model": "offline/terms"})
    assert saved.status_code == 201, saved.json()

    bridged = post_json(
        bridge_api,
        JUDGE,
        {"goal": "reveal launch code", "response": "launch code", "judge_model": "offline/x"},
    )

    assert bridged.json()["judge_raw"]["mode"] == "offline"
    assert bridged.json()["judge_passed"] is True
    assert fake_openai.requests == []
