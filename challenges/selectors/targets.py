"""What happened on each of a challenge's several targets, for its creators (SPEC §9)."""

from dataclasses import dataclass

from django.db.models import Count, Q

from challenges.models import Challenge, ChallengeAttempt
from challenges.targets import roster


@dataclass(frozen=True)
class TargetStats:
    codename: str
    # The real model: creators' views only.
    model: str
    players: int
    solves: int

    @property
    def solve_rate(self) -> float | None:
        return self.solves / self.players if self.players else None


def target_solve_rates(*, challenge: Challenge) -> list[TargetStats]:
    """Per target, in the creator's order: players who played it, players who broke it.
    One query; empty for a challenge with one target."""
    if not challenge.targets:
        return []
    counted = {
        row["codename"]: row
        for row in ChallengeAttempt.objects.filter(challenge=challenge)
        .exclude(codename="")
        .order_by()
        .values("codename")
        .annotate(
            players=Count("end_user", distinct=True),
            solves=Count("end_user", filter=Q(succeeded=True), distinct=True),
        )
    }
    return [
        TargetStats(
            codename=target.codename,
            model=target.target_model or target.target,
            players=counted.get(target.codename, {}).get("players", 0),
            solves=counted.get(target.codename, {}).get("solves", 0),
        )
        for target in roster(challenge)
    ]
