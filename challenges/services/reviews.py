"""Verdicts decided by people (SPEC §10): panel reviews, appeals and reopened wins.

A decision is one transaction that locks the challenge (decisions on one challenge run one
after another, so first blood moves once), then the review, then the attempt; a pass goes
through `attempt_win_grant` and a fail through `attempt_win_withdraw`, the same writes a
live win makes, so proof, copy check, board, first blood and events follow exactly once.
"""

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from challenges.live import first_blood_holder, first_blood_settle
from challenges.models import Challenge, ChallengeAttempt, Review, ReviewAudit
from challenges.review_subjects import pairing_reviews
from challenges.services.attempts import attempt_win_grant, attempt_win_withdraw
from challenges.services.proofs import proof_key_current
from core.errors import ApplicationError, NotFoundError
from core.ratelimit import parse_rate, rate_limit_hit
from players.selectors import membership_role

APPEAL_NOTE_MAX_CHARS = 500
REASON_MAX_CHARS = 2000


def _require_writer(*, user: AbstractBaseUser, workspace_id, missing: str) -> None:
    """Another workspace's row is 404; a viewer of this one is 403."""
    role = membership_role(user=user, workspace_id=workspace_id)
    if role is None:
        raise NotFoundError(missing)
    if role not in ("owner", "editor"):
        raise ApplicationError(
            "Your role in this workspace is read-only.", code="permission_denied", status=403
        )


def _text(value: str, *, field: str, limit: int, required: bool) -> str:
    value = (value or "").strip()
    if "\x00" in value:
        raise ApplicationError("Text may not contain NUL characters.", fields={field: ["NUL."]})
    if required and not value:
        raise ApplicationError(f"Say why ({field}).", fields={field: ["Required."]})
    if len(value) > limit:
        raise ApplicationError(
            f"At most {limit} characters.", fields={field: [f"At most {limit} characters."]}
        )
    return value


def review_decide(*, review_id, actor: AbstractBaseUser, decision: str, reason: str) -> Review:
    """Decide an open review once: `pass` makes the attempt a win, `fail` takes a win away
    (or confirms a failed verdict). A decided review answers 409 `already_decided`."""
    if decision not in Review.Decision.values:
        raise ApplicationError(
            "'decision' must be 'pass' or 'fail'.", fields={"decision": ["pass or fail."]}
        )
    reason = _text(reason, field="reason", limit=REASON_MAX_CHARS, required=True)
    review = (
        Review.objects.filter(id=review_id).only("workspace_id", "challenge_id", "kind").first()
    )
    if review is None:
        raise NotFoundError("No such review.")
    _require_writer(user=actor, workspace_id=review.workspace_id, missing="No such review.")
    if review.kind == Review.Kind.PAIRING:
        return _pairing_review_decide(
            review_id=review_id, actor=actor, decision=decision, reason=reason
        )
    # Fetched before the transaction: a race for the workspace's first key rolls nothing back.
    proof_key = proof_key_current(workspace_id=review.workspace_id)
    with transaction.atomic():
        # FOR NO KEY UPDATE: decisions on one challenge queue; attempts' inserts do not.
        Challenge.objects.select_for_update(no_key=True).filter(id=review.challenge_id).first()
        review = _open_review_locked(review_id)
        attempt = (
            ChallengeAttempt.objects.select_for_update(of=("self",))
            .select_related("challenge", "end_user")
            .get(id=review.attempt_id)
        )
        before = attempt.verdict_status
        holder_before = first_blood_holder(challenge_id=attempt.challenge_id)
        # Decided first: a win's proof, issued below, names the decision.
        _review_mark_decided(review, actor=actor, decision=decision, reason=reason)
        attempt.under_review = False
        attempt.save(update_fields=["under_review"])
        if decision == Review.Decision.PASS and not attempt.succeeded:
            attempt_win_grant(attempt=attempt, proof_key=proof_key)
        elif decision == Review.Decision.FAIL and attempt.succeeded:
            attempt_win_withdraw(attempt=attempt)
        first_blood_settle(challenge=attempt.challenge, holder_before=holder_before)
        ReviewAudit.objects.create(
            workspace_id=review.workspace_id,
            review=review,
            attempt=attempt,
            actor=actor,
            at=review.decided_at,
            before=before,
            after=attempt.verdict_status,
            reason=reason,
        )
    return review


def _open_review_locked(review_id) -> Review:
    review = Review.objects.select_for_update().get(id=review_id)
    if review.status != Review.Status.OPEN:
        raise ApplicationError(
            "This review has already been decided.", code="already_decided", status=409
        )
    return review


def _review_mark_decided(review: Review, *, actor, decision: str, reason: str) -> None:
    review.status = Review.Status.DECIDED
    review.decision = decision
    review.reason = reason
    review.decided_by = actor
    review.decided_at = timezone.now()
    review.save(update_fields=["status", "decision", "reason", "decided_by", "decided_at"])


def _pairing_review_decide(*, review_id, actor, decision: str, reason: str) -> Review:
    """A red/blue pairing's review: decided once, as an attempt's is; its pairing is
    scored by the decision (redblue's handler) and the audit trail records it."""
    with transaction.atomic():
        review = _open_review_locked(review_id)
        _review_mark_decided(review, actor=actor, decision=decision, reason=reason)
        before, after = pairing_reviews().decide(review=review, decision=decision)
        ReviewAudit.objects.create(
            workspace_id=review.workspace_id,
            review=review,
            pairing_id=review.pairing_id,
            actor=actor,
            at=review.decided_at,
            before=before,
            after=after,
            reason=reason,
        )
    return review


def attempt_reopen(*, attempt_id, actor: AbstractBaseUser, reason: str) -> Review:
    """Put a passed attempt back under review. It keeps its place on the board until a
    decision fails it; players see "under review" meanwhile."""
    reason = _text(reason, field="reason", limit=REASON_MAX_CHARS, required=True)
    attempt = ChallengeAttempt.objects.filter(id=attempt_id).only("workspace_id").first()
    if attempt is None:
        raise NotFoundError("No such attempt.")
    _require_writer(user=actor, workspace_id=attempt.workspace_id, missing="No such attempt.")
    try:
        with transaction.atomic():
            attempt = ChallengeAttempt.objects.select_for_update().get(id=attempt_id)
            if not attempt.succeeded or attempt.under_review:
                raise ApplicationError(
                    "Only a passed attempt that is not under review can be reopened.",
                    code="not_passed",
                    status=409,
                )
            attempt.under_review = True
            attempt.save(update_fields=["under_review"])
            review = Review.objects.create(
                workspace_id=attempt.workspace_id,
                challenge_id=attempt.challenge_id,
                attempt=attempt,
                kind=Review.Kind.REOPENED,
                note=reason,
                opened_by=actor,
            )
            ReviewAudit.objects.create(
                workspace_id=attempt.workspace_id,
                review=review,
                attempt=attempt,
                actor=actor,
                at=review.created_at,
                before="passed",
                after="under_review",
                reason=reason,
            )
    except IntegrityError:
        raise ApplicationError(
            "This attempt is already under review.", code="already_open", status=409
        ) from None
    return review


def attempt_appeal(*, attempt_id, account: AbstractBaseUser, note: str) -> Review:
    """A player appeals their own failed attempt, once (SPEC §10): 404 for anyone else's,
    409 for a second appeal or an attempt that did not fail, 429 past the rate limit."""
    note = _text(note, field="note", limit=APPEAL_NOTE_MAX_CHARS, required=True)
    attempt = (
        ChallengeAttempt.objects.filter(id=attempt_id, end_user__account=account)
        .only("id", "workspace_id", "challenge_id")
        .first()
    )
    if attempt is None:
        raise NotFoundError("No such attempt of yours.")
    if Review.objects.filter(attempt_id=attempt.id, kind=Review.Kind.APPEAL).exists():
        raise _appealed_already()
    limit, window = parse_rate(settings.APPEAL_RATE_LIMIT)
    rate_limit_hit(
        scope="appeal-player",
        key=f"{attempt.workspace_id}:{account.pk}",
        limit=limit,
        window_seconds=window,
    )
    try:
        with transaction.atomic():
            attempt = ChallengeAttempt.objects.select_for_update().get(id=attempt.id)
            if attempt.succeeded or attempt.under_review:
                raise ApplicationError(
                    "Only a failed verdict can be appealed.", code="not_failed", status=409
                )
            attempt.under_review = True
            attempt.save(update_fields=["under_review"])
            return Review.objects.create(
                workspace_id=attempt.workspace_id,
                challenge_id=attempt.challenge_id,
                attempt=attempt,
                kind=Review.Kind.APPEAL,
                note=note,
                opened_by=account,
            )
    except IntegrityError:
        raise _appealed_already() from None


def _appealed_already() -> ApplicationError:
    return ApplicationError(
        "You have already appealed this attempt.", code="already_appealed", status=409
    )
