"""Prices, budgets and spend (SPEC §10 Prices and budgets; docs/budgets.md).

An attempt may start only while every budget that applies to it (the workspace's, the
challenge's, the player's on the challenge) has something left. Model calls never hold a
database connection, so the check is a reservation in PostgreSQL: in one short transaction
the spend rows of those budgets are locked (always workspace, challenge, player, in that
order), what was spent plus what running attempts hold is compared with each budget, and a
`BudgetHold` of this attempt's estimate is written. Concurrent attempts queue on those row
locks and see each other's holds, so none starts past a spent budget. When the attempt is
recorded, its real use replaces the hold in the recording's transaction; a failed call
deletes the hold; a hold left by a process that died expires.

Judge calls are part of the attempt: the hold reserves the judges' expected use too
(`judge_token_estimate`), and the defence layers' judges' (`llm_check`, `llm_tool_check`),
and their real use (`usage` of each call, priced by the judge's `provider/model`) is
settled with the target's in the same statement.
"""

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from challenges.models import BudgetHold, Challenge, ModelPrice, Spend
from challenges.services.defences import defence_checks_estimate
from core.errors import ApplicationError
from judging.errors import JudgeConfigError
from judging.judges import judge_for
from judging.targets import TargetConfig, rough_token_count
from judging.verdicts import TokenUse, Verdict
from players.models import EndUser, Workspace

BUDGET_SPENT_MESSAGE = "This challenge has used its budget for now."
PLAYER_BUDGET_SPENT_MESSAGE = "You have used your budget for this challenge for now."
# What a reply is assumed to cost when the target's options set no `max_tokens`.
REPLY_TOKENS_ESTIMATE = 256
CENT_FRACTION = Decimal("0.000001")
ZERO = Decimal(0)


def budget_spent_error(message: str = BUDGET_SPENT_MESSAGE) -> ApplicationError:
    return ApplicationError(message, code="budget_spent", status=402)


@dataclass(frozen=True)
class Price:
    input_per_1k: Decimal
    output_per_1k: Decimal
    currency: str
    # When the price was last set: a process cache holding it re-checks it at write time.
    updated_at: datetime | None = None

    def of(self, *, tokens_input: int, tokens_output: int) -> Decimal:
        cost = (
            Decimal(tokens_input) * self.input_per_1k + Decimal(tokens_output) * self.output_per_1k
        ) / 1000
        return cost.quantize(CENT_FRACTION, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Meter:
    """What an attempt's use is priced and counted with, fixed before its model call."""

    workspace_id: Any
    challenge_id: Any
    end_user_id: Any
    model: str
    price: Price | None
    hold_id: Any = None
    fallback: bool = False

    def cost(self, *, tokens_total: int | None, input_text: str) -> Decimal | None:
        """The use's cost at the model's price: the input counted from the text sent (the
        providers report only a total), the rest as output. None when the model has no
        price in the workspace."""
        if self.price is None or tokens_total is None:
            return None
        tokens_input = min(rough_token_count(input_text), tokens_total)
        return self.price.of(tokens_input=tokens_input, tokens_output=tokens_total - tokens_input)


def price_key(*, challenge: Challenge) -> str:
    """The `model` a challenge's target is priced under: its `target_model`, else its target."""
    return challenge.target_model or challenge.target


def price_for(*, workspace_id, model: str) -> Price | None:
    row = (
        ModelPrice.objects.filter(workspace_id=workspace_id, model=model)
        .values_list("input_per_1k", "output_per_1k", "currency", "updated_at")
        .first()
    )
    return Price(*row) if row else None


def prices_for(*, workspace_id, models: set[str]) -> dict[str, Price]:
    """The workspace's prices of several models in one query (a model with none is absent)."""
    if not models:
        return {}
    rows = ModelPrice.objects.filter(workspace_id=workspace_id, model__in=models).values_list(
        "model", "input_per_1k", "output_per_1k", "currency"
    )
    return {model: Price(*price) for model, *price in rows}


def _uses_cost(uses: tuple[TokenUse, ...], *, prices: dict[str, Price]) -> list[Decimal | None]:
    return [
        prices[use.model].of(tokens_input=use.input_tokens, tokens_output=use.output_tokens)
        if use.model in prices
        else None
        for use in uses
    ]


@dataclass(frozen=True)
class JudgeUse:
    """What the judge calls behind a verdict used: tokens, and their cost (None when no
    judge model of them has a price)."""

    tokens: int | None
    cost: Decimal | None


def judge_use_priced(*, verdict: Verdict, workspace_id) -> tuple[Verdict, JudgeUse]:
    """The verdict with each judge's `tokens` and `cost` filled in at the workspace's price
    of its `provider/model`, and the totals of every judge call behind the attempt: its
    judges' and its defence layers' (`check_usage`: `llm_check`, `llm_tool_check`). A
    verdict no LLM judged used nothing."""
    uses = verdict.usage + verdict.check_usage
    if not uses:
        return verdict, JudgeUse(tokens=None, cost=None)
    prices = prices_for(workspace_id=workspace_id, models={use.model for use in uses})
    costs = _uses_cost(verdict.usage, prices=prices)
    judges = verdict.judges
    if len(judges) == len(verdict.usage):
        judges = tuple(
            {**entry, "cost": None if cost is None else float(cost)}
            for entry, cost in zip(judges, costs, strict=True)
        )
    priced = [
        cost for cost in costs + _uses_cost(verdict.check_usage, prices=prices) if cost is not None
    ]
    use = JudgeUse(
        tokens=sum(use.total for use in uses),
        cost=sum(priced, ZERO) if priced else None,
    )
    return dataclasses.replace(verdict, judges=judges), use


def model_price_set(
    *, workspace: Workspace, model: str, input_per_1k: Decimal, output_per_1k: Decimal, currency
) -> tuple[ModelPrice, bool]:
    """Create or replace the workspace's price of `model`; (the price, whether it is new)."""
    return ModelPrice.objects.update_or_create(
        workspace=workspace,
        model=model,
        defaults={
            "input_per_1k": input_per_1k,
            "output_per_1k": output_per_1k,
            "currency": currency,
        },
    )


def fallback_config(*, challenge: Challenge) -> TargetConfig | None:
    """The creator's cheaper model for when a budget is spent, or None (then it pauses)."""
    name = challenge.fallback_target
    if name == "offline":
        return TargetConfig(provider="offline")
    if name.startswith("openai/") and len(name) > len("openai/"):
        return TargetConfig(
            provider="openai",
            model=name.removeprefix("openai/"),
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            timeout_seconds=settings.TARGET_TIMEOUT_SECONDS,
            max_retries=settings.TARGET_MAX_RETRIES,
        )
    return None


def fallback_target_valid(name: str) -> bool:
    return name in ("", "offline") or (name.startswith("openai/") and len(name) > len("openai/"))


@dataclass(frozen=True)
class _Budget:
    challenge_id: Any
    end_user_id: Any
    tokens: int | None
    cost: Decimal | None
    message: str


SPENT = BUDGET_SPENT_MESSAGE


def _budgets(*, challenge: Challenge, end_user_id, workspace: Workspace) -> list[_Budget]:
    """The budgets set for an attempt of this player here, in lock order."""
    found = []
    if workspace.budget_tokens is not None or workspace.budget_cost is not None:
        found.append(_Budget(None, None, workspace.budget_tokens, workspace.budget_cost, SPENT))
    if challenge.budget_tokens is not None or challenge.budget_cost is not None:
        found.append(
            _Budget(challenge.id, None, challenge.budget_tokens, challenge.budget_cost, SPENT)
        )
    if challenge.player_budget_tokens is not None or challenge.player_budget_cost is not None:
        found.append(
            _Budget(
                challenge.id,
                end_user_id,
                challenge.player_budget_tokens,
                challenge.player_budget_cost,
                PLAYER_BUDGET_SPENT_MESSAGE,
            )
        )
    return found


def challenge_budgeted(*, challenge: Challenge) -> bool:
    """Whether any budget applies to attempts on this challenge (the bridge's fast lane
    hands such calls to Django's path, which counts them)."""
    return bool(_budgets(challenge=challenge, end_user_id=None, workspace=challenge.workspace))


_SPEND_ENSURE = (
    "INSERT INTO challenges_spend (workspace_id, challenge_id, end_user_id, tokens, cost) "
    "VALUES (%s, %s, %s, 0, 0) ON CONFLICT DO NOTHING"
)


def _spend_locked(budget: _Budget, *, workspace_id) -> Spend:
    with connection.cursor() as cursor:
        cursor.execute(_SPEND_ENSURE, [workspace_id, budget.challenge_id, budget.end_user_id])
    return Spend.objects.select_for_update().get(
        workspace_id=workspace_id,
        challenge_id=budget.challenge_id,
        end_user_id=budget.end_user_id,
    )


def _held(budget: _Budget, *, workspace_id, now) -> tuple[int, Decimal]:
    holds = BudgetHold.objects.filter(workspace_id=workspace_id, expires_at__gt=now)
    if budget.challenge_id is not None:
        holds = holds.filter(challenge_id=budget.challenge_id)
    if budget.end_user_id is not None:
        holds = holds.filter(end_user_id=budget.end_user_id)
    sums = holds.aggregate(tokens=Sum("tokens"), cost=Sum("cost"))
    return sums["tokens"] or 0, sums["cost"] or ZERO


def _left(budget: _Budget, spend: Spend, held: tuple[int, Decimal]) -> bool:
    if budget.tokens is not None and spend.tokens + held[0] >= budget.tokens:
        return False
    return not (budget.cost is not None and spend.cost + held[1] >= budget.cost)


def _reply_estimate(config: TargetConfig) -> int:
    reply = (config.options or {}).get("max_tokens")
    return reply if isinstance(reply, int) and reply > 0 else REPLY_TOKENS_ESTIMATE


def attempt_estimate(*, input_text: str, config: TargetConfig) -> int:
    return rough_token_count(input_text) + _reply_estimate(config)


def judge_estimate(*, challenge: Challenge, config: TargetConfig) -> tuple[TokenUse, ...]:
    """What the challenge's judges, and its defence layers' judges (`llm_check`,
    `llm_tool_check`), are expected to use on one attempt: each call's prompt with the goal
    and the reply the target may give, and the judge's `max_tokens`."""
    response_tokens = _reply_estimate(config)
    checks = defence_checks_estimate(defences=challenge.defences, response_tokens=response_tokens)
    llm_judged = challenge.evaluator_type == Challenge.EvaluatorType.LLM_JUDGE
    if not llm_judged or challenge.answer_mode == Challenge.AnswerMode.GUESS:
        return checks
    try:
        judge = judge_for(judge_config=challenge.judge_config, judge_panel=challenge.judge_panel)
        uses = judge.token_estimate(goal=challenge.goal, response_tokens=response_tokens)
    except JudgeConfigError:
        return checks  # the attempt is refused with 422 once judged; nothing to reserve for
    return tuple(uses) + checks


def budget_hold(
    *,
    challenge: Challenge,
    end_user: EndUser,
    input_text: str,
    config: TargetConfig,
    expiry_seconds: int,
) -> tuple[Meter, TargetConfig]:
    """Reserve this attempt's estimate against every budget that applies, before its model
    call: (the meter its use is recorded with, the target to ask). A spent budget answers
    402 `budget_spent`, or switches to the creator's `fallback_target` (unbudgeted)."""
    workspace = challenge.workspace
    # Several targets: the one this attempt plays is what it is priced at.
    model = config.model or price_key(challenge=challenge)
    meter = Meter(
        workspace_id=challenge.workspace_id,
        challenge_id=challenge.id,
        end_user_id=end_user.id,
        model=model,
        price=price_for(workspace_id=challenge.workspace_id, model=model),
    )
    budgets = _budgets(challenge=challenge, end_user_id=end_user.id, workspace=workspace)
    if not budgets:
        return meter, config
    judges = judge_estimate(challenge=challenge, config=config)
    judge_prices = prices_for(
        workspace_id=challenge.workspace_id, models={use.model for use in judges}
    )
    target_tokens = attempt_estimate(input_text=input_text, config=config)
    tokens = target_tokens + sum(use.total for use in judges)
    estimate = (meter.cost(tokens_total=target_tokens, input_text=input_text) or ZERO) + sum(
        (cost for cost in _uses_cost(judges, prices=judge_prices) if cost is not None), ZERO
    )
    now = timezone.now()
    with transaction.atomic():
        for budget in budgets:
            spend = _spend_locked(budget, workspace_id=challenge.workspace_id)
            held = _held(budget, workspace_id=challenge.workspace_id, now=now)
            if not _left(budget, spend, held):
                spent_by = budget
                break
        else:
            BudgetHold.objects.filter(challenge=challenge, expires_at__lte=now).delete()
            hold = BudgetHold.objects.create(
                workspace_id=challenge.workspace_id,
                challenge=challenge,
                end_user=end_user,
                tokens=tokens,
                cost=estimate,
                expires_at=now + timedelta(seconds=expiry_seconds),
            )
            return dataclasses.replace(meter, hold_id=hold.id), config
    fallback = fallback_config(challenge=challenge)
    if fallback is None:
        raise budget_spent_error(spent_by.message)
    name = challenge.fallback_target
    return Meter(
        workspace_id=meter.workspace_id,
        challenge_id=meter.challenge_id,
        end_user_id=meter.end_user_id,
        model=name,
        price=price_for(workspace_id=challenge.workspace_id, model=name),
        fallback=True,
    ), fallback


def meter_unheld(*, challenge: Challenge, end_user: EndUser | None) -> Meter:
    """The meter of a use made elsewhere (a run Dify already made, recorded by the bridge):
    counted and priced, never refused — there is no model call left to stop. Without an
    `end_user`, the meter of any player's use (the bridge lane's cache keeps one per
    challenge; the recorder counts each attempt on its own player)."""
    model = price_key(challenge=challenge)
    return Meter(
        workspace_id=challenge.workspace_id,
        challenge_id=challenge.id,
        end_user_id=end_user.id if end_user is not None else None,
        model=model,
        price=price_for(workspace_id=challenge.workspace_id, model=model),
    )


def budget_release(meter: "Meter | None") -> None:
    """Drop the attempt's hold (a no-op once its use was recorded)."""
    if meter is not None and meter.hold_id is not None:
        BudgetHold.objects.filter(pk=meter.hold_id).delete()


def spend_add_sql(rows: str | None = None) -> str:
    """INSERT the spend `rows` gives (default: one VALUES row of parameters) — workspace,
    challenge, player, tokens, cost, judge tokens, judge cost — adding to a scope's row."""
    table = Spend._meta.db_table
    if rows is None:
        rows = "VALUES (%s, %s, %s, %s, %s, %s, %s)"
    return (
        f"INSERT INTO {table} AS spend "  # noqa: S608
        "(workspace_id, challenge_id, end_user_id, tokens, cost, judge_tokens, judge_cost) "
        f"{rows} "
        "ON CONFLICT (workspace_id, challenge_id, end_user_id) DO UPDATE SET "
        "tokens = spend.tokens + excluded.tokens, cost = spend.cost + excluded.cost, "
        "judge_tokens = spend.judge_tokens + excluded.judge_tokens, "
        "judge_cost = spend.judge_cost + excluded.judge_cost"
    )


@dataclass(frozen=True)
class SpendAmounts:
    """What one attempt adds to each of its scopes' spend; `tokens` and `cost` include
    the judges'."""

    tokens: int
    cost: Decimal
    judge_tokens: int
    judge_cost: Decimal


def spend_amounts(
    *, tokens: int | None, cost: Decimal | None, judge: JudgeUse | None = None
) -> SpendAmounts | None:
    """The attempt's use (the target's `tokens` and `cost`, and the judges'), None when
    it used nothing."""
    judge_tokens = (judge.tokens if judge else None) or 0
    judge_cost = (judge.cost if judge else None) or ZERO
    tokens, cost = (tokens or 0) + judge_tokens, (cost or ZERO) + judge_cost
    if not tokens and not cost:
        return None
    return SpendAmounts(tokens=tokens, cost=cost, judge_tokens=judge_tokens, judge_cost=judge_cost)


def spend_settle(
    *,
    meter: Meter,
    tokens: int | None,
    cost: Decimal | None,
    judge: JudgeUse | None = None,
    player: bool = True,
) -> None:
    """Count the real use (the target's `tokens` and `cost`, and the judges') against every
    scope and drop the hold, inside the recording's transaction (the rows in the
    reservation's lock order). A scope's `tokens` and `cost` include its judges'. With
    `player=False` the player's own scope is left out: the use was the creator's (an agent
    scenario's benign tasks, docs/agents.md)."""
    if meter.hold_id is not None:
        BudgetHold.objects.filter(pk=meter.hold_id).delete()
    amounts = spend_amounts(tokens=tokens, cost=cost, judge=judge)
    if amounts is None:
        return
    scopes = [(None, None), (meter.challenge_id, None)]
    if player:
        scopes.append((meter.challenge_id, meter.end_user_id))
    with connection.cursor() as cursor:
        for challenge_id, end_user_id in scopes:
            cursor.execute(
                spend_add_sql(),
                [
                    meter.workspace_id,
                    challenge_id,
                    end_user_id,
                    amounts.tokens,
                    amounts.cost,
                    amounts.judge_tokens,
                    amounts.judge_cost,
                ],
            )


def budget_paused_reason(*, challenge: Challenge, end_user: EndUser | None) -> str | None:
    """The message a player sees while a budget that applies to them is spent (no fallback)."""
    if challenge.fallback_target:
        return None
    end_user_id = end_user.id if end_user is not None else None
    budgets = _budgets(challenge=challenge, end_user_id=end_user_id, workspace=challenge.workspace)
    budgets = [budget for budget in budgets if end_user_id or budget.end_user_id is None]
    if not budgets:
        return None
    for budget in budgets:
        spend = Spend.objects.filter(
            workspace_id=challenge.workspace_id,
            challenge_id=budget.challenge_id,
            end_user_id=budget.end_user_id,
        ).first() or Spend(tokens=0, cost=ZERO)
        # Only what is spent pauses the page; holds come and go within seconds.
        if not _left(budget, spend, (0, ZERO)):
            return budget.message
    return None
