"""The regression set: a new defence runs against the newest breaks of the challenge
before it counts (docs/redblue.md), and is settled once with its report."""

import logging
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction

from redblue.models import RedBlueChallenge, RegressionAttack, Team, TeamMembership, TeamSubmission
from redblue.teams.agent import benign_report_async
from redblue.teams.evaluation import TargetError, pairing_run_async
from redblue.teams.services.submissions import submission_pair

logger = logging.getLogger(__name__)

# The newest breaks a new defence is run against (each one is a target and a judge call).
REGRESSION_SET_MAX = 50


@dataclass(frozen=True)
class RegressionCase:
    attack_submission_id: Any
    prompt: str
    end_user_id: Any
    slots: dict | None = None


def regression_cases(*, challenge: RedBlueChallenge) -> list[RegressionCase]:
    """The attacks a new defence must withstand: the newest REGRESSION_SET_MAX breaks."""
    rows = (
        RegressionAttack.objects.filter(red_blue_challenge=challenge)
        .order_by("-created_at")
        .values_list(
            "attack_submission_id",
            "attack_submission__prompt",
            "attack_submission__end_user_id",
            "attack_submission__slots",
        )[:REGRESSION_SET_MAX]
    )
    return [RegressionCase(*row) for row in reversed(rows)]


def defense_regression_settle(
    *, submission_id: Any, report: dict[str, Any] | None, benign: dict[str, Any] | None = None
) -> str:
    """Store a checked defence's report once; a defence that withstood every attack then
    counts: it becomes the player's current defence and is paired as any new one is.
    Returns `rejected`, `passed` or `already_done` (a retried task changes nothing)."""
    submission = (
        TeamSubmission.objects.filter(pk=submission_id).select_related("red_blue_challenge").first()
    )
    if submission is None:
        return "already_done"
    challenge = submission.red_blue_challenge
    rejected = bool(report) and (bool(report.get("failures")) or bool(report.get("error")))
    with transaction.atomic():
        list(
            TeamMembership.objects.select_for_update().filter(
                red_blue_challenge=challenge, end_user_id=submission.end_user_id
            )
        )
        settled = TeamSubmission.objects.filter(
            pk=submission.pk, status=TeamSubmission.Status.CHECKING
        ).update(
            status=TeamSubmission.Status.REJECTED if rejected else TeamSubmission.Status.PAIRED,
            regression_report=report,
            benign_report=benign,
        )
        if not settled:
            return "already_done"
        if rejected:
            return "rejected"
        newer = TeamSubmission.objects.filter(
            red_blue_challenge=challenge,
            end_user_id=submission.end_user_id,
            team=Team.BLUE,
            created_at__gt=submission.created_at,
        ).exclude(status=TeamSubmission.Status.REJECTED)
        if newer.exists():
            # The player sent another defence meanwhile: that one is their current one.
            TeamSubmission.objects.filter(pk=submission.pk).update(
                regression_report={**(report or {}), "superseded": True}
            )
            return "passed"
        TeamSubmission.objects.filter(
            red_blue_challenge=challenge,
            end_user_id=submission.end_user_id,
            team=Team.BLUE,
            active=True,
        ).update(active=False)
        TeamSubmission.objects.filter(pk=submission.pk).update(active=True)
        submission.refresh_from_db()
        submission_pair(challenge=challenge, submission=submission, judge_own_pairing_here=False)
    return "passed"


def defense_regression_run(*, submission_id: Any, last_try: bool = True) -> str:
    """Run a defence waiting in `checking` against the regression set (the Celery task's
    body): the target and the judge suite per attack, with no transaction open, then one
    settling write. A target that does not answer raises TargetError for a retry; on the
    last try the defence is rejected with the reason (the player may send it again)."""
    submission = (
        TeamSubmission.objects.filter(pk=submission_id, status=TeamSubmission.Status.CHECKING)
        .select_related("red_blue_challenge")
        .first()
    )
    if submission is None:
        return "already_done"
    challenge = submission.red_blue_challenge
    cases = regression_cases(challenge=challenge)
    failures = []
    benign = None
    try:
        if challenge.agent is not None:
            # Once per defence, before it counts; pairings read it from the submission.
            benign = async_to_sync(benign_report_async)(
                challenge=challenge,
                system_prompt=submission.prompt,
                defences=submission.defences or [],
                user=str(submission.end_user_id or ""),
            )
        for case in cases:
            outcome = async_to_sync(pairing_run_async)(
                challenge=challenge,
                attack=case.prompt,
                defense=submission.prompt,
                slots=case.slots,
                defences=submission.defences,
                benign=None,
                user=str(case.end_user_id or ""),
                scored=False,
            )
            if outcome.verdict.breached:
                failure = {
                    "attack_submission_id": str(case.attack_submission_id),
                    "prompt": case.prompt,
                    "categories": outcome.verdict.breached,
                    "judge_rating": outcome.verdict.rating,
                    "response": outcome.reply.text,
                }
                if outcome.trace is not None:
                    failure["slots"] = case.slots or {}
                    failure["trace"] = outcome.trace
                failures.append(failure)
    except TargetError as exc:
        logger.warning("Red/blue target failed checking defence %s: %s", submission.pk, exc)
        if not last_try:
            raise
        report = {
            "checked": len(cases),
            "passed": False,
            "failures": failures,
            "error": "target_unavailable",
        }
        return defense_regression_settle(submission_id=submission.pk, report=report, benign=benign)
    # An agent defence checked only for its benign tasks (no breaks yet) has no report.
    report = (
        {"checked": len(cases), "passed": not failures, "failures": failures} if cases else None
    )
    return defense_regression_settle(submission_id=submission.pk, report=report, benign=benign)
