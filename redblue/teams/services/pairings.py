"""Writes for a judged pairing: running it (the Celery task's body), storing its verdicts
and points once, a person's decision on one under review, and a target that never answered."""

import logging
from decimal import Decimal
from typing import Any

from asgiref.sync import async_to_sync
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from challenges.models import Review
from core.errors import ApplicationError
from redblue.models import RegressionAttack, Team, TeamPairing, TeamStanding, TeamSubmission
from redblue.teams.evaluation import (
    PairingOutcome,
    TargetError,
    judge_output_raw,
    pairing_run_async,
    suite_verdict_stored,
)
from redblue.teams.live import board_push_on_commit, pairing_completed_on_commit
from redblue.teams.scoring import PairingPoints, pairing_points

logger = logging.getLogger(__name__)

_STANDING_COLUMNS = (
    "red_blue_challenge_id",
    "end_user_id",
    "team",
    "points",
    "pairings",
    "updated_at",
)


def _standing_add(*, challenge_id: Any, end_user_id: Any, team: str, points: Decimal) -> None:
    """One INSERT … ON CONFLICT DO UPDATE adding to the player's standing: atomic in the
    database, so concurrent pairings never lose an increment."""
    table = TeamStanding._meta.db_table
    fields = {field.attname: field for field in TeamStanding._meta.concrete_fields}
    values = {
        "red_blue_challenge_id": challenge_id,
        "end_user_id": end_user_id,
        "team": team,
        "points": points,
        "pairings": 1,
        "updated_at": timezone.now(),
    }
    params = [
        fields[name].get_db_prep_value(values[name], connection, prepared=False)
        for name in _STANDING_COLUMNS
    ]
    columns = ", ".join(_STANDING_COLUMNS)
    placeholders = ", ".join(["%s"] * len(_STANDING_COLUMNS))
    # Only our own table and column names are interpolated; values go as parameters.
    sql = (
        f"INSERT INTO {table} AS standing ({columns}) VALUES ({placeholders}) "  # noqa: S608
        "ON CONFLICT (red_blue_challenge_id, end_user_id, team) DO UPDATE SET "
        "points = standing.points + excluded.points, "
        "pairings = standing.pairings + 1, updated_at = excluded.updated_at"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _points_apply(*, pairing: TeamPairing, points: PairingPoints, breached: list[str]) -> None:
    """Add a scored pairing's points to both submissions and both players' standings
    (single-statement increments), and a break to the regression set, in the caller's
    transaction."""
    attack, defense = pairing.attack_submission, pairing.defense_submission
    if breached:
        # A new break: the attack joins the challenge's regression set (once).
        RegressionAttack.objects.bulk_create(
            [
                RegressionAttack(
                    red_blue_challenge_id=pairing.red_blue_challenge_id,
                    attack_submission_id=attack.pk,
                    pairing_id=pairing.pk,
                    categories=breached,
                )
            ],
            ignore_conflicts=True,
        )
    for submission, earned, team in (
        (attack, points.red, Team.RED),
        (defense, points.blue, Team.BLUE),
    ):
        TeamSubmission.objects.filter(pk=submission.pk).update(
            points_total=F("points_total") + earned, pairings_count=F("pairings_count") + 1
        )
        if submission.end_user_id:
            _standing_add(
                challenge_id=pairing.red_blue_challenge_id,
                end_user_id=submission.end_user_id,
                team=team,
                points=earned,
            )


def pairing_complete(*, pairing: TeamPairing, outcome: PairingOutcome) -> bool:
    """Store the verdicts and points once; a repeat (a retried task) changes nothing.

    A verdict a judge panel disagreed on is stored unscored, `review`, with a review in
    the queue; the decision scores it (`pairing_review_decide`). Returns whether this call
    completed the pairing (or sent it to review).
    """
    verdict = outcome.verdict
    under_review = verdict.under_review
    points = outcome.points
    assert points is not None or under_review
    with transaction.atomic():
        completed = TeamPairing.objects.filter(
            pk=pairing.pk, status=TeamPairing.Status.PENDING
        ).update(
            status=TeamPairing.Status.REVIEW if under_review else TeamPairing.Status.COMPLETED,
            response=outcome.reply.text,
            categories=verdict.as_flags(),
            judge_output_raw=outcome.judge_output_raw(),
            judge_rating=verdict.rating,
            judge_feedback=verdict.feedback,
            red_points=points.red if points else 0,
            blue_points=points.blue if points else 0,
            tokens_total=outcome.reply.tokens_total,
            elapsed_ms=outcome.reply.elapsed_ms,
            trace=outcome.trace,
            completed_at=timezone.now(),
        )
        if not completed:
            return False
        if under_review:
            Review.objects.create(
                workspace_id=pairing.workspace_id, pairing_id=pairing.pk, kind=Review.Kind.PAIRING
            )
            # Shown as under review; `team_pairing_completed` waits for the decision.
            board_push_on_commit(
                challenge_id=pairing.red_blue_challenge_id, pairing_ids=[pairing.pk]
            )
            return True
        _points_apply(pairing=pairing, points=points, breached=verdict.breached)
        pairing_completed_on_commit(
            challenge_id=pairing.red_blue_challenge_id, pairing_id=pairing.pk
        )
    return True


def pairing_review_decide(*, review: Review, decision: str) -> tuple[str, str]:
    """A person decided a pairing's disputed categories: `pass` counts them breached (the
    attack got through), `fail` held. The pairing is scored now, once: only a pairing still
    under review moves to completed, in the decision's transaction (which holds the
    review's row)."""
    pairing = (
        TeamPairing.objects.select_for_update(of=("self",))
        .select_related("red_blue_challenge", "attack_submission", "defense_submission")
        .get(pk=review.pairing_id)
    )
    if pairing.status != TeamPairing.Status.REVIEW:
        raise ApplicationError(
            "This pairing is no longer under review.", code="already_decided", status=409
        )
    verdict = suite_verdict_stored(pairing.judge_output_raw).decided(
        breached=decision == Review.Decision.PASS
    )
    points = pairing_points(
        challenge=pairing.red_blue_challenge,
        verdict=verdict,
        attack=pairing.attack_submission.prompt,
        defense=pairing.defense_submission.prompt,
        tokens_total=pairing.tokens_total,
        elapsed_ms=pairing.elapsed_ms,
    )
    raw = {**pairing.judge_output_raw, **judge_output_raw(verdict, points=points)}
    # The stored per-judge verdicts and token counts stay as the judges gave them.
    raw["judge_tokens"] = pairing.judge_output_raw.get("judge_tokens")
    raw["decided"] = decision
    TeamPairing.objects.filter(pk=pairing.pk, status=TeamPairing.Status.REVIEW).update(
        status=TeamPairing.Status.COMPLETED,
        categories=verdict.as_flags(),
        judge_output_raw=raw,
        judge_rating=verdict.rating,
        judge_feedback=verdict.feedback,
        red_points=points.red,
        blue_points=points.blue,
    )
    _points_apply(pairing=pairing, points=points, breached=verdict.breached)
    pairing_completed_on_commit(challenge_id=pairing.red_blue_challenge_id, pairing_id=pairing.pk)
    return "under_review", "passed" if decision == Review.Decision.PASS else "failed"


def pairing_fail(*, pairing: TeamPairing, reason: str) -> bool:
    """The target never answered: record it; nobody scores."""
    with transaction.atomic():
        failed = TeamPairing.objects.filter(
            pk=pairing.pk, status=TeamPairing.Status.PENDING
        ).update(
            status=TeamPairing.Status.FAILED,
            judge_feedback="The target model did not answer; this pairing does not count.",
            judge_output_raw={"error": "target_unavailable", "reason": reason[:300]},
            completed_at=timezone.now(),
        )
        if failed:
            board_push_on_commit(
                challenge_id=pairing.red_blue_challenge_id, pairing_ids=[pairing.pk]
            )
    return bool(failed)


def pairing_for_judging(*, pairing_id: Any) -> TeamPairing | None:
    """The pending pairing with what judging needs loaded, or None when already done."""
    return (
        TeamPairing.objects.filter(pk=pairing_id, status=TeamPairing.Status.PENDING)
        .select_related("red_blue_challenge", "attack_submission", "defense_submission")
        .first()
    )


def pairing_judge(*, pairing_id: Any, last_try: bool = True) -> str:
    """Run and store a pending pairing (the Celery task's body).

    A target that does not answer raises TargetError for a retry, and on the last try
    the pairing is recorded as failed. Returns what became of the pairing.
    """
    pairing = pairing_for_judging(pairing_id=pairing_id)
    if pairing is None:
        return "already_done"
    challenge = pairing.red_blue_challenge
    attack, defense = pairing.attack_submission, pairing.defense_submission
    try:
        outcome = async_to_sync(pairing_run_async)(
            challenge=challenge,
            attack=attack.prompt,
            defense=defense.prompt,
            slots=attack.slots,
            defences=defense.defences,
            benign=defense.benign_report,
            user=str(attack.end_user_id or ""),
        )
    except TargetError as exc:
        logger.warning("Red/blue target failed for pairing %s: %s", pairing.pk, exc)
        if not last_try:
            raise
        pairing_fail(pairing=pairing, reason=str(exc))
        return "failed"
    return "completed" if pairing_complete(pairing=pairing, outcome=outcome) else "already_done"
