"""Spend against each budget (SPEC §10 Prices and budgets): `GET /console/api/spend` and the
creator dashboard, in a fixed handful of queries however many challenges and players."""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, F, Q, QuerySet

from challenges.models import Challenge, Spend
from players.models import Workspace

ZERO = Decimal(0)


@dataclass(frozen=True)
class Budget:
    tokens: int | None
    cost: Decimal | None

    @property
    def is_set(self) -> bool:
        return self.tokens is not None or self.cost is not None


@dataclass(frozen=True)
class Used:
    tokens: int
    cost: Decimal
    # The judges' part of the above.
    judge_tokens: int = 0
    judge_cost: Decimal = ZERO


def _spent_out(budget: Budget, used: Used) -> bool:
    return (budget.tokens is not None and used.tokens >= budget.tokens) or (
        budget.cost is not None and used.cost >= budget.cost
    )


def _share(budget: Budget, used: Used) -> int | None:
    """How much of the budget is used, in percent of its tightest part (capped at 100)."""
    shares = []
    if budget.tokens:
        shares.append(used.tokens / budget.tokens)
    if budget.cost:
        shares.append(float(used.cost / budget.cost))
    return min(100, round(max(shares) * 100)) if shares else None


@dataclass(frozen=True)
class ChallengeSpend:
    challenge: Challenge
    budget: Budget
    player_budget: Budget
    spent: Used
    players_spent_out: int

    @property
    def paused(self) -> bool:
        return self.budget.is_set and _spent_out(self.budget, self.spent)

    @property
    def share(self) -> int | None:
        return _share(self.budget, self.spent)


@dataclass(frozen=True)
class WorkspaceSpend:
    workspace: Workspace
    budget: Budget
    spent: Used
    challenges: list[ChallengeSpend]

    @property
    def paused(self) -> bool:
        return self.budget.is_set and _spent_out(self.budget, self.spent)

    @property
    def share(self) -> int | None:
        return _share(self.budget, self.spent)


def _players_spent_out(challenges: QuerySet[Challenge]) -> dict[Any, int]:
    over = (
        Spend.objects.filter(challenge__in=challenges, end_user__isnull=False)
        .filter(
            Q(
                challenge__player_budget_tokens__isnull=False,
                tokens__gte=F("challenge__player_budget_tokens"),
            )
            | Q(
                challenge__player_budget_cost__isnull=False,
                cost__gte=F("challenge__player_budget_cost"),
            )
        )
        .values("challenge_id")
        .annotate(players=Count("id"))
    )
    return {row["challenge_id"]: row["players"] for row in over}


def workspace_spend(*, workspace: Workspace) -> WorkspaceSpend:
    """The workspace's spend and budget, and each of its challenges', most spent first."""
    challenges = Challenge.objects.filter(workspace=workspace)
    rows = {
        row["challenge_id"]: Used(
            row["tokens"], row["cost"], row["judge_tokens"], row["judge_cost"]
        )
        for row in Spend.objects.filter(workspace=workspace, end_user__isnull=True).values(
            "challenge_id", "tokens", "cost", "judge_tokens", "judge_cost"
        )
    }
    players_out = _players_spent_out(challenges)
    nothing = Used(0, ZERO)
    listed = [
        ChallengeSpend(
            challenge=challenge,
            budget=Budget(challenge.budget_tokens, challenge.budget_cost),
            player_budget=Budget(challenge.player_budget_tokens, challenge.player_budget_cost),
            spent=rows.get(challenge.id, nothing),
            players_spent_out=players_out.get(challenge.id, 0),
        )
        for challenge in challenges.order_by("name")
    ]
    listed.sort(key=lambda row: (-row.spent.tokens, row.challenge.name))
    return WorkspaceSpend(
        workspace=workspace,
        budget=Budget(workspace.budget_tokens, workspace.budget_cost),
        spent=rows.get(None, nothing),
        challenges=listed,
    )
