"""The live Red-vs-Blue board: its channel-layer group and the pushes after commit."""

from typing import Any

from django.utils import timezone

from notifications.live import group_send_on_commit
from notifications.services import event_emit_on_commit
from redblue.teams.selectors import (
    pairing_public,
    pairings_with_sides,
    red_blue_challenge_by_id,
    standings_for_challenge,
)


def red_blue_group(challenge_id: Any) -> str:
    return f"leaderboard.red-blue.{challenge_id}"


def board_push_on_commit(*, challenge_id: Any, pairing_ids: list[Any] = ()) -> None:
    """Once committed, push the standings (and what changed in these pairings)."""

    def message() -> dict[str, Any] | None:
        challenge = red_blue_challenge_by_id(challenge_id=challenge_id)
        if challenge is None:
            return None
        pairings = pairings_with_sides(pairing_ids=list(pairing_ids)) if pairing_ids else []
        return {
            "type": "red_blue.changed",
            "standings": standings_for_challenge(challenge=challenge),
            "pairings": [pairing_public(pairing) for pairing in pairings],
        }

    group_send_on_commit(group=red_blue_group(challenge_id), message=message)


def pairing_completed_on_commit(*, challenge_id: Any, pairing_id: Any) -> None:
    """The one place a judged pairing is announced (SPEC §6 `team_pairing_completed`).

    Called inside the judging transaction: the event is stored with it (once per pairing,
    by the event's unique key) and delivered, like the board push, after the commit.
    """
    board_push_on_commit(challenge_id=challenge_id, pairing_ids=[pairing_id])
    pairing = next(iter(pairings_with_sides(pairing_ids=[pairing_id])), None)
    if pairing is None:
        return
    public = pairing_public(pairing)
    event_emit_on_commit(
        type="team_pairing_completed",
        workspace_id=pairing.red_blue_challenge.workspace_id,
        subject_id=challenge_id,
        dedupe_key=str(pairing_id),
        payload={
            "red_blue_challenge_id": str(challenge_id),
            "pairing_id": str(pairing_id),
            "attack_submission_id": public["attack_submission_id"],
            "defense_submission_id": public["defense_submission_id"],
            "categories": public["categories"],
            "judge_rating": public["judge_rating"],
            "red_points": public["red_points"],
            "blue_points": public["blue_points"],
        },
        occurred_at=pairing.completed_at or timezone.now(),
    )


def opponent_requested_on_commit(*, challenge_id: Any, team: str, submission_id: Any) -> None:
    """Signal `team` that a submission waits for one of theirs.

    Today the live board shows it; an event for the other side will be emitted from here.
    """

    def message() -> dict[str, Any]:
        return {
            "type": "red_blue.opponent_requested",
            "team": team,
            "submission_id": str(submission_id),
        }

    group_send_on_commit(group=red_blue_group(challenge_id), message=message)
