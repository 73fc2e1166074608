"""A challenge's leaderboard: the top rows, one player's rank and the live frame."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import F, Q

from challenges.models import Challenge, LeaderboardEntry
from challenges.selectors.standings import BoardView, standing_attempt_field, standing_entries
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


def leaderboard_for_challenge(
    *, challenge: Challenge, limit: int, view: BoardView | None = None
) -> list[LeaderboardRow]:
    """The top `limit` players as `view` shows them (None: live, every bracket): live, one
    index range scan joined to the player's name."""
    source = standing_entries(view=view, challenge_ids=[challenge.id])
    entries = (
        source.order_by("rank_value", "achieved_at", "id")
        .annotate(
            proof_config=F(standing_attempt_field(source, "config_sha256")),
            session_ref=F(standing_attempt_field(source, "play_session__id")),
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
