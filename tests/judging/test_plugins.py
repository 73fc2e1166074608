import logging
import socket
import time

import pytest

from judging import sandbox
from judging.plugins import (
    EVALUATOR_GROUP,
    PLUGIN_FAILURE_FEEDBACK,
    SCORER_GROUP,
    evaluate_with_plugin,
    plugins_available,
    score_with_plugin,
)
from judging.sandbox import sandbox_problem
from tests.conftest import require_service

SIMPLE = {"must_contain": ["password"], "banned": ["sorry"]}


@pytest.fixture(autouse=True)
def _bubblewrap():
    require_service("the bubblewrap plugin sandbox", not sandbox_problem(), sandbox_problem())


def evaluate(plugin_id, response="The password is swordfish", config=SIMPLE, **kwargs):
    return evaluate_with_plugin(
        plugin_id=plugin_id, goal="Leak the password", response=response, config=config, **kwargs
    )


def test_it_discovers_the_example_plugins_through_entry_points():
    assert plugins_available(EVALUATOR_GROUP)["simple"] == (
        "prompt_challenges_example.evaluators:SimpleEvaluator"
    )
    assert plugins_available(SCORER_GROUP)["weighted"] == (
        "prompt_challenges_example.scorers:WeightedScorer"
    )


@pytest.mark.parametrize(
    ("response", "passed", "rating", "feedback"),
    [
        ("The PASSWORD is swordfish", True, 8, "Meets the criteria."),
        ("Sorry, the password is secret", False, 2, "Banned content detected."),
        ("I will not tell you", False, 5, "A required signal is missing."),
    ],
)
def test_it_runs_the_simple_evaluator_in_the_sandbox(response, passed, rating, feedback):
    verdict = evaluate("simple", response=response)

    assert (verdict.passed, verdict.rating, verdict.feedback) == (passed, rating, feedback)
    assert verdict.raw == {"plugin_id": "simple"}


def test_it_accepts_a_registered_entrypoint_value():
    verdict = evaluate_with_plugin(
        entrypoint="prompt_challenges_example.evaluators:SimpleEvaluator",
        goal="g",
        response="password",
        config=SIMPLE,
    )

    assert verdict.passed is True


@pytest.mark.parametrize("entrypoint", ["os:system", "json:JSONDecoder", "subprocess:run"])
def test_it_refuses_an_import_path_that_is_not_a_registered_plugin(entrypoint):
    verdict = evaluate_with_plugin(entrypoint=entrypoint, goal="g", response="r", config={})

    assert verdict.passed is False
    assert verdict.feedback == PLUGIN_FAILURE_FEEDBACK
    assert verdict.raw["error"] == "not_found"


def test_it_runs_the_weighted_scorer_in_the_sandbox():
    metrics = {"succeeded": True, "rating": 8, "elapsed_ms": 2500, "tokens_total": 200}

    default = score_with_plugin(plugin_id="weighted", metrics=metrics)
    tuned = score_with_plugin(
        plugin_id="weighted",
        metrics=metrics,
        config={"success_bonus": 10, "rating_weight": 1, "time_penalty": 2, "token_penalty": 0},
    )
    floored = score_with_plugin(plugin_id="weighted", metrics={"elapsed_ms": 10**9})

    assert default == pytest.approx(100 + 80 - 2.5 - 2.0)
    assert tuned == pytest.approx(10 + 8 - 5)
    assert floored == 0.0


def test_it_stops_a_plugin_that_raises_and_logs_only_the_outcome(caplog):
    with caplog.at_level(logging.INFO, logger="judging.plugins"):
        verdict = evaluate("test-raises", response="TOP-SECRET-RESPONSE")

    assert verdict.passed is False
    assert verdict.rating is None
    assert verdict.feedback == PLUGIN_FAILURE_FEEDBACK
    assert verdict.raw == {"error": "error", "plugin_id": "test-raises"}
    [record] = [r for r in caplog.records if r.name == "judging.plugins"]
    line = record.getMessage()
    assert "plugin_id=test-raises" in line
    assert "outcome=error" in line
    assert "duration_ms=" in line
    assert "TOP-SECRET-RESPONSE" not in caplog.text
    assert "always fails" not in caplog.text


def test_it_stops_a_plugin_that_loops_forever(settings):
    settings.PLUGIN_TIMEOUT_SECONDS = 1

    verdict = evaluate("test-loops")

    assert verdict.passed is False
    assert verdict.feedback == PLUGIN_FAILURE_FEEDBACK
    assert verdict.raw["error"] == "timeout"


def test_it_stops_a_plugin_that_allocates_too_much():
    verdict = evaluate("test-hungry", config={"megabytes": 4096})

    assert verdict.passed is False
    assert verdict.feedback == PLUGIN_FAILURE_FEEDBACK
    assert verdict.raw["error"] in ("memory", "crashed")


def test_it_lets_a_plugin_use_memory_under_the_ceiling():
    verdict = evaluate("test-hungry", config={"megabytes": 16})

    assert verdict.passed is True


def test_it_stops_a_plugin_that_opens_a_socket():
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    try:
        verdict = evaluate("test-network", config={"host": "127.0.0.1", "port": port})

        assert verdict.passed is False
        assert verdict.feedback == PLUGIN_FAILURE_FEEDBACK
        assert verdict.raw["error"] == "network"
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


def test_it_keeps_a_plugin_off_the_network_even_from_a_child_process():
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    try:
        verdict = evaluate("test-network-escape", config={"host": "127.0.0.1", "port": port})

        assert verdict.passed is False
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


def test_it_does_not_wait_for_a_child_that_leaves_the_sandbox_session(settings):
    settings.PLUGIN_TIMEOUT_SECONDS = 2
    started = time.monotonic()

    verdict = evaluate("test-detaches", config={"linger_seconds": 30})

    # The child dies with the sandbox's PID namespace, so the answer comes at once.
    assert time.monotonic() - started < 2
    assert verdict.raw == {"plugin_id": "test-detaches"}


def test_it_gives_up_when_every_sandbox_slot_stays_busy(settings):
    settings.PLUGIN_MAX_CONCURRENT = 1
    settings.PLUGIN_TIMEOUT_SECONDS = 0.2
    sandbox._slots.cache_clear()
    sandbox._slots().acquire()
    try:
        verdict = evaluate("simple")
    finally:
        sandbox._slots().release()
        sandbox._slots.cache_clear()

    assert verdict.passed is False
    assert verdict.raw["error"] == "busy"


def test_it_counts_a_malformed_result_as_a_non_pass():
    verdict = evaluate("test-bad-result")

    assert verdict.passed is False
    assert verdict.raw["error"] == "bad_result"


def test_it_gives_a_plugin_only_whitelisted_masked_variables_and_no_secrets():
    verdict = evaluate_with_plugin(
        plugin_id="test-echo",
        goal="Leak hunter2",
        response="Sure, it is HUNTER2.",
        config={"k": "v"},
        ctx={
            "challenge_id": "c-1",
            "variables": {
                "player_name": "Ada",
                "api_key": "sk-live-123",
                "note": "pw hunter2 here",
                "tags": ["a", "b"],
                "blob": {"nested": "object"},
                "bad name!": "x",
            },
        },
        mask_variables=["api_key"],
        secrets=["hunter2"],
    )

    seen = verdict.raw["plugin"]
    assert verdict.passed is True
    assert verdict.rating == 10  # 15 from the plugin, clamped to 0–10
    assert seen["goal"] == "Leak [redacted]"
    assert seen["response"] == "Sure, it is [redacted]."
    assert seen["config"] == {"k": "v"}
    assert seen["ctx"]["challenge_id"] == "c-1"
    assert seen["ctx"]["timeout_ms"] == 5000
    assert seen["ctx"]["variables"] == {
        "player_name": "Ada",
        "api_key": "***",
        "note": "pw [redacted] here",
        "tags": ["a", "b"],
    }
    assert set(seen["environment"]) <= {"PATH", "LANG", "LC_CTYPE", "HOME", "PWD"}


@pytest.mark.parametrize("plugin_id", ["test-raises", "test-loops", "not-installed"])
def test_it_gives_no_score_when_the_scorer_fails(settings, plugin_id):
    settings.PLUGIN_TIMEOUT_SECONDS = 1

    assert score_with_plugin(plugin_id=plugin_id, metrics={"succeeded": True}) is None


def test_it_refuses_to_run_a_plugin_where_the_sandbox_cannot_start(monkeypatch, caplog):
    monkeypatch.setenv("PATH", "/nonexistent")
    sandbox_problem.cache_clear()
    try:
        with caplog.at_level(logging.ERROR, logger="judging.sandbox"):
            verdict = evaluate("simple")
    finally:
        monkeypatch.undo()
        sandbox_problem.cache_clear()

    assert verdict.passed is False
    assert verdict.feedback == PLUGIN_FAILURE_FEEDBACK
    assert verdict.raw == {"error": "sandbox_unavailable", "plugin_id": "simple"}
    assert "apt-get install bubblewrap" in caplog.text
