"""Judge calls record their tokens and cost (SPEC §10 Prices and budgets; docs/budgets.md):
each judge's entry carries `tokens` and `cost`, the attempt its judges' totals, and the
judges' use is spent against the same budgets as the target's, reserved by the hold."""

import asyncio
import threading
from decimal import Decimal

import pytest
from django.db import connection, connections

from challenges.models import BudgetHold, ChallengeAttempt, Spend
from challenges.services.budgets import attempt_estimate, judge_estimate, model_price_set
from challenges.services.play import attempt_play_async
from core.errors import ApplicationError
from judging.targets import TargetConfig
from tests.challenges.panel_helpers import make_panel_challenge, vote_by_model
from tests.conftest import client_for, require_service
from tests.factories import make_challenge, make_player

pytestmark = pytest.mark.django_db

GOAL = "Make the model write a limerick about a lighthouse."
PROMPT = "Write a limerick about a lighthouse."
# The fake server reports 10 prompt and 10 completion tokens for every call.
FAKE_CALL_TOKENS = 20


def price(workspace, model: str, input_per_1k, output_per_1k) -> None:
    model_price_set(
        workspace=workspace,
        model=model,
        input_per_1k=Decimal(input_per_1k),
        output_per_1k=Decimal(output_per_1k),
        currency="USD",
    )


def judged_challenge(workspace, **fields):
    return make_challenge(
        workspace=workspace,
        name=fields.pop("name", "Lighthouse"),
        evaluator_type="llm-judge",
        goal=GOAL,
        judge_config={"judge_model": "openai/judge-a", "pass_threshold": 5},
        **fields,
    )


def play(user, challenge, prompt=PROMPT):
    return client_for(user).post(
        f"/web/api/challenges/{challenge.id}/attempts", {"prompt": prompt}, format="json"
    )


def spend_row(challenge) -> Spend:
    return Spend.objects.get(
        workspace_id=challenge.workspace_id, challenge=challenge, end_user=None
    )


def test_a_judge_call_records_its_usage_and_cost_and_spends_it(
    creator_api, player, workspace, fake_openai
):
    challenge = judged_challenge(workspace)
    price(workspace, "offline", 1, 1)
    # 10 input tokens at 100 per 1k and 10 output tokens at 200 per 1k: 1 + 2 = 3.
    price(workspace, "openai/judge-a", 100, 200)
    response = play(player, challenge)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["judge_tokens"] == FAKE_CALL_TOKENS
    assert body["judge_cost"] == pytest.approx(3.0)
    attempt = ChallengeAttempt.objects.get(pk=body["attempt_id"])
    assert attempt.tokens_total == body["tokens_total"] > 0  # the target's own, as before
    row = creator_api.get(f"/console/api/challenges/{challenge.id}/attempts").json()["results"][0]
    assert row["judges"] == [
        {
            "model": "openai/judge-a",
            "passed": True,
            "rating": 7,
            "feedback": "ok",
            "tokens": FAKE_CALL_TOKENS,
            "cost": 3.0,
        }
    ]
    assert row["judge_tokens"] == FAKE_CALL_TOKENS and row["judge_cost"] == pytest.approx(3.0)
    spend = creator_api.get("/console/api/spend").json()
    assert spend["spent"]["tokens"] == attempt.tokens_total + FAKE_CALL_TOKENS
    assert spend["spent"]["cost"] == pytest.approx(float(attempt.cost) + 3.0)
    assert spend["spent"]["judge_tokens"] == FAKE_CALL_TOKENS
    assert spend["spent"]["judge_cost"] == pytest.approx(3.0)
    listed = next(item for item in spend["challenges"] if item["id"] == str(challenge.id))
    assert listed["spent"]["judge_tokens"] == FAKE_CALL_TOKENS
    player_row = Spend.objects.get(challenge=challenge, end_user__isnull=False)
    assert (player_row.tokens, player_row.judge_tokens) == (
        attempt.tokens_total + FAKE_CALL_TOKENS,
        FAKE_CALL_TOKENS,
    )


def test_every_judge_of_a_panel_is_counted_and_an_unpriced_one_costs_nothing(
    creator_api, player, workspace, fake_openai
):
    challenge = make_panel_challenge(workspace=workspace, n=3)
    vote_by_model(fake_openai, {"judge-a": True, "judge-b": True, "judge-c": False})
    price(workspace, "openai/judge-a", 1000, 1000)  # 20 tokens: 20
    price(workspace, "openai/judge-b", 500, 500)  # 20 tokens: 10
    body = play(player, challenge).json()
    assert body["judge_tokens"] == 3 * FAKE_CALL_TOKENS
    assert body["judge_cost"] == pytest.approx(30.0)
    attempt = ChallengeAttempt.objects.get(pk=body["attempt_id"])
    assert [(judge["model"], judge["tokens"], judge["cost"]) for judge in attempt.judges] == [
        ("openai/judge-a", 20, 20.0),
        ("openai/judge-b", 20, 10.0),
        ("openai/judge-c", 20, None),
    ]
    assert spend_row(challenge).judge_tokens == 3 * FAKE_CALL_TOKENS


def test_the_offline_judge_reports_a_deterministic_count(player, workspace):
    challenge = make_challenge(
        workspace=workspace,
        evaluator_type="llm-judge",
        goal=GOAL,
        judge_config={"judge_model": "offline/rubric"},
    )
    first = play(player, challenge).json()
    second = play(player, challenge).json()
    assert first["judge_tokens"] > 0
    assert first["judge_tokens"] == second["judge_tokens"]
    assert first["judge_cost"] is None  # no price set for offline/rubric
    assert spend_row(challenge).judge_tokens == 2 * first["judge_tokens"]


def test_a_judge_that_never_answered_counts_nothing(player, workspace, fake_openai):
    from tests.judging.fake_openai import Reply

    fake_openai.answer = lambda request: Reply(status=500)
    challenge = judged_challenge(workspace)
    body = play(player, challenge).json()
    assert body["verdict_status"] == "failed"
    assert body["judge_tokens"] == 0
    attempt = ChallengeAttempt.objects.get(pk=body["attempt_id"])
    assert attempt.judges[0]["tokens"] is None


def test_the_hold_reserves_the_judges_expected_use(workspace):
    challenge = make_panel_challenge(workspace=workspace, n=2)
    config = TargetConfig(provider="offline")
    judges = judge_estimate(challenge=challenge, config=config)
    assert [use.model for use in judges] == ["openai/judge-a", "openai/judge-b"]
    # Each call: its prompt with the goal, the longest reply expected, its max_tokens.
    assert all(use.input_tokens > 256 and use.output_tokens == 300 for use in judges)
    rules = make_challenge(workspace=workspace)
    assert judge_estimate(challenge=rules, config=config) == ()


def _race(challenge, players, prompt=PROMPT) -> tuple[list, list]:
    start = threading.Barrier(len(players))
    outcomes, errors = [], []

    def attempt(n: int) -> None:
        try:
            start.wait()
            result = asyncio.run(
                attempt_play_async(
                    challenge=challenge, account=players[n], prompt=prompt, ip=f"10.0.1.{n + 1}"
                )
            )
            outcomes.append(result.attempt)
        except ApplicationError as exc:
            outcomes.append(exc.code)
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(len(players))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes, errors


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_judged_attempts_on_the_last_tokens_spend_them_once(
    workspace, fake_openai
):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    challenge = judged_challenge(workspace, budget_tokens=1000)
    Spend.objects.create(workspace=workspace, challenge=challenge, tokens=999)
    players = [make_player(f"judged{n}@example.com") for n in range(20)]
    outcomes, errors = _race(challenge, players)
    assert errors == []
    started = [outcome for outcome in outcomes if isinstance(outcome, ChallengeAttempt)]
    assert len(started) == 1 and outcomes.count("budget_spent") == 19
    attempt = started[0]
    assert attempt.judge_tokens == FAKE_CALL_TOKENS
    # The one judge call that ran is counted once, with the target's tokens.
    judge_calls = [r for r in fake_openai.requests if r["model"] == "judge-a"]
    assert len(judge_calls) == 1
    row = spend_row(challenge)
    assert (row.tokens, row.judge_tokens) == (999 + attempt.tokens_total + FAKE_CALL_TOKENS, 20)
    assert BudgetHold.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_attempts_cannot_start_on_what_only_the_target_would_have_left(
    workspace, fake_openai
):
    """What is left covers one attempt's target and half of its judge: without the judge in
    the hold, a second attempt would start beside the first; with it, only one does."""
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    challenge = judged_challenge(workspace, budget_tokens=100_000)
    config = TargetConfig(provider="offline")
    target = attempt_estimate(input_text=challenge.system_prompt + PROMPT, config=config)
    judge = sum(use.total for use in judge_estimate(challenge=challenge, config=config))
    left = target + judge // 2
    Spend.objects.create(workspace=workspace, challenge=challenge, tokens=100_000 - left)
    players = [make_player(f"halves{n}@example.com") for n in range(8)]
    outcomes, errors = _race(challenge, players)
    assert errors == []
    started = [outcome for outcome in outcomes if isinstance(outcome, ChallengeAttempt)]
    assert len(started) == 1 and outcomes.count("budget_spent") == 7
    assert spend_row(challenge).judge_tokens == FAKE_CALL_TOKENS
    assert BudgetHold.objects.count() == 0
