"""The creator dashboard at /admin/ (SPEC §5 Pages): what is happening in the creator's
workspaces, in a handful of queries whatever their size."""

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F

from challenges.models import Bounty, Challenge, LeaderboardEntry, Review, Wave
from challenges.selectors.bounties import BountyStanding, bounty_standings
from challenges.selectors.challenge_stats import (
    challenges_with_attempt_count,
    challenges_with_play_stats,
)
from challenges.selectors.copies import CopyCluster, near_copy_clusters
from challenges.selectors.reviews import JudgeAgreement, judge_agreement_for_workspaces
from challenges.selectors.spend import WorkspaceSpend, workspace_spend
from challenges.selectors.targets import target_solve_rates
from notifications.models import Event
from notifications.subjects import EventSubject, event_headline, event_subjects
from players.selectors import workspaces_for_user

ROWS = 10


@dataclass(frozen=True)
class Solve:
    challenge: Challenge
    player: str
    at: datetime


@dataclass(frozen=True)
class FeedItem:
    headline: str
    subject: EventSubject | None
    at: datetime
    first_blood: bool


@dataclass(frozen=True)
class Dashboard:
    challenges: list[Challenge]  # with play stats, most recently played first
    recent_solves: list[Solve]
    first_bloods: list[FeedItem]
    feed: list[FeedItem]
    copy_clusters: list[CopyCluster]  # near-identical wins (SPEC §10 Copies), largest first
    # Spend against each budget (docs/budgets.md), per workspace with a budget or a spend.
    spend: list[WorkspaceSpend]
    judge_agreement: list[JudgeAgreement]  # per challenge with a panel or a decided review
    open_reviews: int
    # Bounties with what they owe now (docs/bounties.md), and the total owed per currency.
    bounties: list[BountyStanding] = dataclasses.field(default_factory=list)
    payout_totals: list[tuple[str, Decimal]] = dataclasses.field(default_factory=list)
    waves: list[Wave] = dataclasses.field(default_factory=list)


def creator_dashboard(*, user: AbstractBaseUser) -> Dashboard:
    workspaces = workspaces_for_user(user=user)
    challenges = challenges_with_attempt_count(
        challenges_with_play_stats(Challenge.objects.filter(workspace__in=workspaces))
    ).order_by(F("last_attempt_at").desc(nulls_last=True), "-created_at")[:ROWS]
    solves = (
        LeaderboardEntry.objects.filter(challenge__workspace__in=workspaces)
        .select_related("challenge", "end_user")
        .order_by("-first_succeeded_at")[:ROWS]
    )
    events = list(
        Event.objects.filter(workspace__in=workspaces)
        .exclude(type=Event.Type.WEBHOOK_TEST)
        .order_by("-occurred_at")[: ROWS * 2]
    )
    subjects = event_subjects(events)
    feed = [_feed_item(event, subjects.get(event.id)) for event in events]
    challenges = list(challenges)
    for challenge in challenges:
        # Several targets: a line per model under the challenge's row.
        challenge.target_stats = target_solve_rates(challenge=challenge)
    return Dashboard(
        challenges=challenges,
        recent_solves=[
            Solve(entry.challenge, entry.end_user.public_name, entry.first_succeeded_at)
            for entry in solves
        ],
        first_bloods=[item for item in feed if item.first_blood][:ROWS],
        feed=feed[:ROWS],
        copy_clusters=near_copy_clusters(
            challenges=Challenge.objects.filter(workspace__in=workspaces)
        )[:ROWS],
        spend=_spend(workspaces),
        judge_agreement=judge_agreement_for_workspaces(
            workspace_ids=list(workspaces.values_list("id", flat=True))
        ),
        open_reviews=Review.objects.filter(
            workspace__in=workspaces, status=Review.Status.OPEN
        ).count(),
        **_bounties(workspaces),
    )


def _bounties(workspaces) -> dict[str, Any]:
    standings = bounty_standings(
        bounties=list(
            Bounty.objects.filter(workspace__in=workspaces)
            .select_related("challenge")
            .order_by("created_at", "id")
        )
    )
    totals: dict[str, Decimal] = {}
    for standing in standings:
        currency = standing.bounty.currency
        totals[currency] = totals.get(currency, Decimal(0)) + standing.paid
    waves = (
        Wave.objects.filter(workspace__in=workspaces)
        .exclude(state=Wave.State.CLOSED)
        .prefetch_related("challenges")
        .order_by("opens_at", "id")[:ROWS]
    )
    return {
        "bounties": standings[:ROWS],
        "payout_totals": sorted(totals.items()),
        "waves": list(waves),
    }


def _spend(workspaces) -> list[WorkspaceSpend]:
    shown = []
    for workspace in workspaces.order_by("name")[:ROWS]:
        report = workspace_spend(workspace=workspace)
        challenges = [
            row
            for row in report.challenges
            if row.budget.is_set or row.player_budget.is_set or row.spent.tokens
        ][:ROWS]
        if report.budget.is_set or challenges:
            shown.append(dataclasses.replace(report, challenges=challenges))
    return shown


def _feed_item(event: Any, subject: EventSubject | None) -> FeedItem:
    return FeedItem(
        headline=event_headline(event, subject, to_creator=True),
        subject=subject,
        at=event.occurred_at,
        first_blood=event.type == Event.Type.CHALLENGE_FIRST_BLOOD,
    )
