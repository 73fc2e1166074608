"""A challenge's leaderboard: the top rows, one player's rank and the live frame."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from challenges.models import Challenge, ChallengeAttempt, LeaderboardEntry
from challenges.selectors.standings import (
    BoardView,
    standing_attempt_field,
    standing_entries,
    won_by,
)
from players.models import EndUser


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    player: str
    # "site" or "dify": boards mark bridge players from this, never from the name's text.
    source: str
    end_user_id: str
    score: float | None
    judge_rating: int | None
    tokens_total: int | None
    elapsed_ms: int | None
    achieved_at: datetime
    attempt_id: str
    # The win has a signed proof at /proofs/<attempt_id>/ (wins recorded before proofs
    # existed have none).
    has_proof: bool = False
    # A conversation's win: its session's transcript, for the winner and the creators.
    session_id: str = ""
    # Several targets, on the combined board: how many of them the player has broken.
    targets_broken: int | None = None


def target_entries(*, view: BoardView | None, challenge: Challenge, codename: str) -> QuerySet:
    """Each player's best win on one of the challenge's targets, as `view` shows it: rows
    with the names `standing_entries` gives (the attempts themselves)."""
    wins = ChallengeAttempt.objects.filter(
        challenge_id=challenge.id, codename=codename, succeeded=True, rank_value__isnull=False
    )
    if view is not None and view.bracket is not None:
        wins = wins.filter(end_user__bracket=view.bracket)
    if view is not None and view.cutoff is not None:
        wins = wins.filter(created_at__lte=view.cutoff)
    if view is not None:
        wins = wins.filter(won_by(view.players))
    best = wins.order_by("end_user_id", "rank_value", "created_at", "id").distinct("end_user_id")
    return ChallengeAttempt.objects.filter(id__in=best.values("id")).annotate(
        achieved_at=F("created_at"), attempt_id=F("id")
    )


def _targets_broken(*, challenge: Challenge, view: BoardView | None):
    """Per row: the player's targets broken (distinct codenames of their wins)."""
    wins = ChallengeAttempt.objects.filter(
        challenge_id=challenge.id, end_user_id=OuterRef("end_user_id"), succeeded=True
    ).exclude(codename="")
    if view is not None and view.cutoff is not None:
        wins = wins.filter(created_at__lte=view.cutoff)
    if view is not None:
        wins = wins.filter(won_by(view.players))
    counted = (
        wins.order_by().values("end_user_id").annotate(n=Count("codename", distinct=True))
    ).values("n")
    return Coalesce(Subquery(counted[:1]), 0)


def leaderboard_for_challenge(
    *, challenge: Challenge, limit: int, view: BoardView | None = None, codename: str = ""
) -> list[LeaderboardRow]:
    """The top `limit` players as `view` shows them (None: live, every bracket): live, one
    index range scan joined to the player's name. With several targets: `codename` gives
    that target's board; without it the combined board counts each player's targets
    broken."""
    if codename:
        source = target_entries(view=view, challenge=challenge, codename=codename)
    else:
        source = standing_entries(view=view, challenge_ids=[challenge.id])
    # The combined board of several targets counts the targets each player broke.
    counts_targets = bool(challenge.targets) and not codename
    broken = {"broken": _targets_broken(challenge=challenge, view=view)} if counts_targets else {}
    entries = (
        source.order_by("rank_value", "achieved_at", "id")
        .annotate(
            proof_config=F(standing_attempt_field(source, "config_sha256")),
            session_ref=F(standing_attempt_field(source, "play_session__id")),
            **broken,
        )
        .values(
            "achieved_at",
            "score",
            "judge_rating",
            "tokens_total",
            "elapsed_ms",
            "attempt_id",
            "end_user_id",
            "end_user__display_name",
            "end_user__external_id",
            "proof_config",
            "session_ref",
            *broken,
        )[:limit]
    )
    rows = []
    for position, entry in enumerate(entries, start=1):
        player = EndUser(
            display_name=entry["end_user__display_name"],
            external_id=entry["end_user__external_id"],
        )
        rows.append(
            LeaderboardRow(
                rank=position,
                player=player.public_name,
                source=player.source,
                end_user_id=str(entry["end_user_id"]),
                score=entry["score"],
                judge_rating=entry["judge_rating"],
                tokens_total=entry["tokens_total"],
                elapsed_ms=entry["elapsed_ms"],
                achieved_at=entry["achieved_at"],
                attempt_id=str(entry["attempt_id"]),
                has_proof=bool(entry["proof_config"]),
                session_id=str(entry["session_ref"] or ""),
                targets_broken=entry.get("broken"),
            )
        )
    return rows


def leaderboard_standings(
    *,
    challenge: Challenge,
    rows: list[LeaderboardRow] | None = None,
    view: BoardView | None = None,
) -> dict[str, Any]:
    """The live board's frame: the shown rows of the standings, ready to send as JSON.
    `rows` are the board's top rows when the caller has read them already."""
    if rows is None:
        rows = leaderboard_for_challenge(
            challenge=challenge, limit=settings.LEADERBOARD_DEFAULT_LIMIT, view=view
        )
    cutoff = view.cutoff if view is not None else None
    return {
        "type": "leaderboard",
        "challenge_id": str(challenge.id),
        "scoring_strategy": challenge.scoring_strategy,
        "frozen_at": cutoff.isoformat() if cutoff else None,
        "entries": [
            {
                "rank": row.rank,
                "player": row.player,
                "source": row.source,
                "end_user_id": row.end_user_id,
                "score": row.score,
                "judge_rating": row.judge_rating,
                "tokens_total": row.tokens_total,
                "elapsed_ms": row.elapsed_ms,
                "achieved_at": row.achieved_at.isoformat(),
                **({} if row.targets_broken is None else {"targets_broken": row.targets_broken}),
            }
            for row in rows
        ],
    }


def leaderboard_rank(*, challenge: Challenge, end_user: EndUser) -> int | None:
    """The player's live place on the board; None without a solve, and None while the
    event is frozen or its boards are hidden: a live place counts the others' solves the
    public board does not show."""
    workspace = challenge.workspace
    if (
        workspace.board_cutoff() is not None
        or workspace.board_visibility == workspace.BoardVisibility.HIDDEN
    ):
        return None
    entry = (
        LeaderboardEntry.objects.filter(challenge=challenge, end_user=end_user)
        .values("rank_value", "achieved_at", "id")
        .first()
    )
    if entry is None:
        return None
    ahead = LeaderboardEntry.objects.filter(challenge=challenge).filter(
        Q(rank_value__lt=entry["rank_value"])
        | Q(rank_value=entry["rank_value"], achieved_at__lt=entry["achieved_at"])
        | Q(rank_value=entry["rank_value"], achieved_at=entry["achieved_at"], id__lt=entry["id"])
    )
    return ahead.count() + 1
