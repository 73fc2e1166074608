"""Clusters of near-identical wins for creators (SPEC §10 Copies): wins linked by
`near_copy_of`, each with the player who won it. Creators' views only: players never see
who copied whom, nor anybody else's prompt."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from challenges.models import Challenge, ChallengeAttempt

# The flagged wins a dashboard looks at, newest first.
FLAGGED_ROWS = 200


@dataclass(frozen=True)
class ClusterWin:
    attempt_id: Any
    player: str
    at: datetime
    # How close to the win it was flagged against; None for the cluster's first win.
    similarity: float | None


@dataclass(frozen=True)
class CopyCluster:
    challenge: Challenge
    wins: list[ClusterWin]  # oldest first: the first is the one the others resemble

    @property
    def players(self) -> list[str]:
        return list(dict.fromkeys(win.player for win in self.wins))


def near_copy_clusters(
    *, challenges: QuerySet[Challenge], limit: int = FLAGGED_ROWS
) -> list[CopyCluster]:
    """The clusters among the latest `limit` flagged wins on `challenges`, largest first.

    Two queries whatever the number of clusters: the flagged wins with the wins they copy.
    """
    flagged = list(
        ChallengeAttempt.objects.filter(challenge__in=challenges, near_copy_of__isnull=False)
        .select_related(
            "challenge", "end_user", "near_copy_of__challenge", "near_copy_of__end_user"
        )
        .order_by("-created_at")[:limit]
    )
    parent: dict[Any, Any] = {}

    def root(attempt_id):
        while parent.get(attempt_id, attempt_id) != attempt_id:
            attempt_id = parent[attempt_id]
        return attempt_id

    attempts: dict[Any, ChallengeAttempt] = {}
    for attempt in flagged:
        attempts[attempt.id] = attempt
        attempts.setdefault(attempt.near_copy_of_id, attempt.near_copy_of)
        parent[root(attempt.id)] = root(attempt.near_copy_of_id)
    groups: dict[Any, list[ChallengeAttempt]] = {}
    for attempt in attempts.values():
        groups.setdefault(root(attempt.id), []).append(attempt)
    clusters = [
        CopyCluster(
            challenge=members[0].challenge,
            wins=[
                ClusterWin(
                    attempt_id=member.id,
                    player=member.end_user.public_name,
                    at=member.created_at,
                    similarity=member.near_copy_similarity,
                )
                for member in sorted(members, key=lambda member: (member.created_at, member.id))
            ],
        )
        for members in groups.values()
    ]
    clusters.sort(key=lambda cluster: (-len(cluster.wins), -cluster.wins[-1].at.timestamp()))
    return clusters
