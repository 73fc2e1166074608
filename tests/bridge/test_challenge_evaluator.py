import json
import logging

import pytest

from challenges.models import BridgeDelivery, ChallengeAttempt
from challenges.services.secrets import secret_create
from players.models import EndUser
from tests.bridge.conftest import EVALUATOR, post_json, post_raw_text, run_id
from tests.factories import make_challenge, make_workspace

pytestmark = pytest.mark.django_db


def test_it_answers_with_the_node_outputs_and_records_the_attempt(bridge_api, challenge):
    run = run_id()
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(challenge.id),
            "output": "Fine: open sesame.",
            "user": "dify-user-42",
            "workflow_run_id": run,
            "prompt": "say the words",
            "tokens_total": 31,
            "elapsed_ms": 900,
        },
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert set(body) == {"challenge_succeeded", "message", "attempt_id", "output"}
    assert body["challenge_succeeded"] is True
    assert body["output"] == "Fine: open sesame."
    assert body["message"]
    attempt = ChallengeAttempt.objects.get()
    assert str(attempt.id) == body["attempt_id"]
    assert attempt.source == "bridge"
    assert attempt.idempotency_key == run
    assert attempt.workflow_run_id == run
    assert (attempt.tokens_total, attempt.elapsed_ms) == (31, 900)
    assert attempt.end_user == EndUser.objects.get(external_id="dify-user-42")
    assert attempt.response == "Fine: open sesame."


def test_it_records_a_failed_attempt_without_its_text(bridge_api, challenge):
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": challenge.slug,
            "output": "I will not say it.",
            "user": "dify-user-1",
            "workflow_run_id": run_id(),
        },
    )
    body = response.json()
    assert response.status_code == 200
    assert body["challenge_succeeded"] is False
    attempt = ChallengeAttempt.objects.get()
    assert str(attempt.id) == body["attempt_id"]
    assert attempt.response == ""
    assert attempt.response_length == len("I will not say it.")


def test_it_answers_without_recording_when_there_is_no_user(bridge_api, challenge):
    response = post_json(
        bridge_api,
        EVALUATOR,
        {"challenge_id": str(challenge.id), "output": "open sesame", "workflow_run_id": run_id()},
    )
    assert response.status_code == 200
    assert response.json()["challenge_succeeded"] is True
    assert "attempt_id" not in response.json()
    assert not ChallengeAttempt.objects.exists()


def test_it_never_records_inline_evaluations(bridge_api, workspace):
    for body in (
        {"success_type": "regex", "success_pattern": r"FLAG-\d+"},
        {"inline": {"success_type": "regex", "success_pattern": r"FLAG-\d+"}},
    ):
        response = post_json(
            bridge_api,
            EVALUATOR,
            {**body, "output": "here: FLAG-123", "user": "u1", "workflow_run_id": run_id()},
        )
        assert response.status_code == 200, response.json()
        assert response.json() == {
            "challenge_succeeded": True,
            "message": "The output matches the success pattern.",
            "output": "here: FLAG-123",
        }
    assert not ChallengeAttempt.objects.exists()


def test_it_refuses_an_invalid_inline_regex(bridge_api):
    response = post_json(
        bridge_api,
        EVALUATOR,
        {"success_type": "regex", "success_pattern": "(a+", "output": "a", "workflow_run_id": "r"},
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert "missing )" in error["fields"]["success_pattern"][0]
    assert not BridgeDelivery.objects.exists()


def test_it_answers_a_catastrophic_regex_on_a_long_output(bridge_api, workspace):
    output = "a" * 50_000 + "!"
    inline = post_json(
        bridge_api,
        EVALUATOR,
        {
            "success_type": "regex",
            "success_pattern": "(a+)+$",
            "output": output,
            "workflow_run_id": run_id(),
        },
    )
    assert inline.status_code == 200
    assert inline.json()["challenge_succeeded"] is False

    stored = make_challenge(workspace=workspace, success_type="regex", success_pattern="(a+)+$")
    recorded = post_json(
        bridge_api,
        EVALUATOR,
        {"challenge_id": str(stored.id), "output": output, "user": "u", "workflow_run_id": "r2"},
    )
    assert recorded.status_code == 200
    assert recorded.json()["challenge_succeeded"] is False
    assert ChallengeAttempt.objects.count() == 1


def test_it_needs_a_challenge_or_an_inline_rule(bridge_api):
    response = post_json(bridge_api, EVALUATOR, {"output": "x", "workflow_run_id": "r"})
    assert response.status_code == 400
    assert "challenge_id" in response.json()["error"]["fields"]


def test_it_needs_a_workflow_run_id(bridge_api, challenge):
    response = post_json(bridge_api, EVALUATOR, {"challenge_id": str(challenge.id), "output": "x"})
    assert response.status_code == 400
    assert "workflow_run_id" in response.json()["error"]["fields"]


def test_it_hides_challenges_of_other_workspaces(bridge_api):
    theirs = make_challenge(workspace=make_workspace("Elsewhere"))
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(theirs.id),
            "output": "open sesame",
            "user": "u",
            "workflow_run_id": "r",
        },
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not ChallengeAttempt.objects.exists()


def test_it_refuses_attempts_on_a_closed_challenge(bridge_api, workspace):
    closed = make_challenge(workspace=workspace, is_active=False)
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(closed.id),
            "output": "open sesame",
            "user": "u",
            "workflow_run_id": "r",
        },
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "challenge_closed"
    assert not ChallengeAttempt.objects.exists()


def test_it_replays_the_first_answer_for_a_repeated_run(bridge_api, challenge):
    run = run_id()
    first = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(challenge.id),
            "output": "open sesame",
            "user": "u",
            "workflow_run_id": run,
        },
    )
    again = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(challenge.id),
            "output": "nothing",
            "user": "u",
            "workflow_run_id": run,
        },
    )
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert ChallengeAttempt.objects.count() == 1
    assert BridgeDelivery.objects.get().workflow_run_id == run


def test_it_redacts_the_secret_from_the_output_and_the_stored_attempt(bridge_api, workspace):
    secret_create(workspace=workspace, name="flag", value="Pineapple-77")
    guarded = make_challenge(
        workspace=workspace,
        secret_ref="flag",
        success_type="contains",
        success_pattern="{{secret}}",
    )
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(guarded.id),
            "output": "The password is pineapple-77!",
            "user": "u",
            "workflow_run_id": run_id(),
        },
    )
    body = response.json()
    assert body["challenge_succeeded"] is True
    assert body["output"] == "The password is [redacted]!"
    assert "pineapple" not in json.dumps(body).lower()
    assert "pineapple" not in ChallengeAttempt.objects.get().response.lower()
    assert "pineapple" not in json.dumps(BridgeDelivery.objects.get().response).lower()


def test_it_keeps_masked_variables_out_of_rows_and_logs(bridge_api, workspace, caplog):
    masked = make_challenge(workspace=workspace, success_pattern="leak", mask_variables=["api_key"])
    caplog.set_level(logging.DEBUG)
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(masked.id),
            "output": "leak: sk-live-0123456789",
            "prompt": "my key is sk-live-0123456789",
            "user": "u",
            "workflow_run_id": run_id(),
            "variables": {"api_key": "sk-live-0123456789", "language": "en"},
        },
    )
    assert response.status_code == 200
    assert response.json()["challenge_succeeded"] is True
    attempt = ChallengeAttempt.objects.get()
    stored = " ".join(
        [
            attempt.prompt,
            attempt.response,
            attempt.judge_feedback,
            json.dumps(attempt.judge_output_raw),
        ]
        + [json.dumps(BridgeDelivery.objects.get().response)]
    )
    assert "sk-live-0123456789" not in stored
    assert "[redacted]" in attempt.response
    assert "sk-live-0123456789" not in caplog.text
    assert "bridge_call" in caplog.text


@pytest.mark.parametrize(
    "output",
    [
        'He said "open sesame" \\o/ and left',
        "line one\nopen sesame\n\ttabbed \\n literal backslash-n",
        "Сезам, откройся — open sesame 芝麻开门 🔓 مرحبا",
        '{"nested": "json \\"quoted\\""} open sesame',
    ],
)
def test_it_takes_tricky_outputs_intact_in_raw_text_mode(bridge_api, challenge, output):
    # What the workflow's Code node produces with json.dumps, sent as raw text.
    text = json.dumps(
        {
            "challenge_id": str(challenge.id),
            "output": output,
            "user": "u",
            "workflow_run_id": run_id(),
        },
        ensure_ascii=False,
    )
    response = post_raw_text(bridge_api, EVALUATOR, text)
    assert response.status_code == 200, response.json()
    assert response.json()["output"] == output
    assert response.json()["challenge_succeeded"] is True
    assert ChallengeAttempt.objects.get().response == output


def test_it_explains_how_to_fix_a_broken_body(bridge_api, challenge):
    # Dify's JSON mode pasting an output with a quote and a newline into the template.
    template = '{"challenge_id": "ID", "output": "He said "hi"\nbye", "workflow_run_id": "r"}'
    broken = template.replace("ID", str(challenge.id))
    response = post_raw_text(bridge_api, EVALUATOR, broken)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_json"
    for hint in ("Code node", "json.dumps", "raw-text", "integrations/dify"):
        assert hint in error["message"]
    assert not BridgeDelivery.objects.exists()

    not_an_object = post_raw_text(bridge_api, EVALUATOR, '["output"]')
    assert not_an_object.status_code == 400
    assert not_an_object.json()["error"]["code"] == "invalid_json"


def test_it_rate_limits_each_key(bridge_api, challenge, settings):
    settings.BRIDGE_RATE_LIMIT = "2/m"
    body = {"challenge_id": str(challenge.id), "output": "x"}
    for n in range(2):
        assert (
            post_json(bridge_api, EVALUATOR, {**body, "workflow_run_id": f"r{n}"}).status_code
            == 200
        )
    limited = post_json(bridge_api, EVALUATOR, {**body, "workflow_run_id": "r3"})
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "rate_limited"
    assert int(limited["Retry-After"]) >= 1


def test_it_judges_with_the_llm_when_the_challenge_says_so(bridge_api, workspace, fake_openai):
    from tests.judging.fake_openai import verdict

    judged = make_challenge(
        workspace=workspace,
        evaluator_type="llm-judge",
        goal="Get the bot to write a poem about pirates",
        judge_config={"judge_model": "openai/judge-1", "pass_threshold": 7},
        scoring_strategy="highest_rating",
    )
    fake_openai.answer = lambda request: verdict(passed=None, rating=8, feedback="A fine poem.")
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(judged.id),
            "output": "Yo ho ho, a pirate's verse",
            "user": "u",
            "workflow_run_id": run_id(),
        },
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert set(body) == {
        "challenge_succeeded",
        "message",
        "judge_rating",
        "judge_feedback",
        "attempt_id",
        "output",
    }
    assert (body["challenge_succeeded"], body["judge_rating"]) == (True, 8)
    assert body["judge_feedback"] == "A fine poem."
    attempt = ChallengeAttempt.objects.get()
    assert (attempt.judge_rating, attempt.score) == (8, 8.0)


def test_it_refuses_a_user_that_claims_a_site_account(bridge_api, challenge):
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "challenge_id": str(challenge.id),
            "output": "open sesame",
            "user": "account:1",
            "workflow_run_id": run_id(),
        },
    )
    assert response.status_code == 400
    assert "user" in response.json()["error"]["fields"]
    assert not ChallengeAttempt.objects.exists()


def test_it_refuses_an_unknown_inline_rule_type(bridge_api):
    response = post_json(
        bridge_api,
        EVALUATOR,
        {"success_type": "glob", "success_pattern": "a*", "output": "a", "workflow_run_id": "r"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"success_type": ["contains or regex"]}
