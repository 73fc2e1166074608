"""Reads of the review queue, the audit trail and each challenge's judge agreement."""

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Count, Q, QuerySet

from challenges.models import Challenge, ChallengeAttempt, Review, ReviewAudit
from core.errors import ApplicationError
from players.models import Membership
from players.selectors import rows_for_creator, workspaces_for_user


def reviews_for_creator(
    *, user: AbstractBaseUser, status: str | None = None, workspace_id: Any = None
) -> QuerySet[Review]:
    reviews = rows_for_creator(Review.objects, user=user, workspace_id=workspace_id)
    if status:
        reviews = reviews.filter(status=status)
    return reviews.select_related(
        "attempt",
        "attempt__own_text",
        "challenge",
        "pairing__attack_submission",
        "pairing__defense_submission",
    ).order_by("created_at", "id")


def audit_for_owner(*, user: AbstractBaseUser, workspace_id: Any = None) -> QuerySet[ReviewAudit]:
    """Every decision in the workspaces the user owns; 403 for one who owns none."""
    if user.is_superuser:
        owned = workspaces_for_user(user=user).values("id")
    else:
        owned = Membership.objects.filter(user=user, role=Membership.Role.OWNER).values(
            "workspace_id"
        )
        if not owned.exists():
            raise ApplicationError(
                "Only a workspace's owners read its audit trail.",
                code="permission_denied",
                status=403,
            )
    entries = ReviewAudit.objects.filter(workspace_id__in=owned)
    if workspace_id:
        entries = entries.filter(workspace_id=workspace_id)
    return entries.select_related("actor").order_by("-at", "id")


def reviews_of_attempts(*, attempt_ids: list[Any]) -> dict[Any, Review]:
    """Each attempt's latest review, for the player's own history."""
    latest: dict[Any, Review] = {}
    reviews = Review.objects.filter(attempt_id__in=attempt_ids).order_by("created_at")
    for review in reviews:
        latest[review.attempt_id] = review
    return latest


@dataclass(frozen=True)
class JudgeAgreement:
    challenge_id: Any
    challenge_name: str
    panel_attempts: int
    agreed: int
    decided: int
    overturned: int

    @property
    def agreement_share(self) -> float | None:
        return self.agreed / self.panel_attempts if self.panel_attempts else None

    @property
    def overturned_share(self) -> float | None:
        return self.overturned / self.decided if self.decided else None


def judge_agreement_for_workspaces(*, workspace_ids: list[Any]) -> list[JudgeAgreement]:
    """Per challenge judged by a panel or with a decided review: how often its judges
    agreed, and how often a person overturned a verdict (a bad rubric shows here)."""
    table = ChallengeAttempt._meta.db_table
    ids = [str(workspace_id) for workspace_id in workspace_ids]
    # Only our own table name is interpolated; the ids go as a parameter.
    sql = (
        "SELECT challenge_id, count(*), count(*) FILTER (WHERE ("  # noqa: S608
        "SELECT count(DISTINCT judge->>'passed') FROM jsonb_array_elements(judges) judge"
        f") = 1) FROM {table} WHERE workspace_id::text = ANY(%s) "
        "AND jsonb_array_length(judges) >= 2 GROUP BY challenge_id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids])
        panels = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}
    decisions = {
        row["challenge_id"]: row
        for row in Review.objects.filter(
            workspace_id__in=workspace_ids, status=Review.Status.DECIDED, challenge__isnull=False
        )
        .values("challenge_id")
        .annotate(
            decided=Count("id"),
            # Overturned: an appeal passed, or a reopened win failed (a disputed panel
            # gave no verdict to overturn).
            overturned=Count(
                "id",
                filter=Q(kind=Review.Kind.APPEAL, decision=Review.Decision.PASS)
                | Q(kind=Review.Kind.REOPENED, decision=Review.Decision.FAIL),
            ),
        )
    }
    challenge_ids = set(panels) | set(decisions)
    names = dict(Challenge.objects.filter(id__in=challenge_ids).values_list("id", "name"))
    return [
        JudgeAgreement(
            challenge_id=challenge_id,
            challenge_name=names.get(challenge_id, ""),
            panel_attempts=panels.get(challenge_id, (0, 0))[0],
            agreed=panels.get(challenge_id, (0, 0))[1],
            decided=decisions.get(challenge_id, {}).get("decided", 0),
            overturned=decisions.get(challenge_id, {}).get("overturned", 0),
        )
        for challenge_id in sorted(challenge_ids, key=lambda key: names.get(key, ""))
    ]
