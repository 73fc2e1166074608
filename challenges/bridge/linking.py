"""Linking a Dify user to a site account through the bridge: the link (players.link_codes)
and the merge of attempts and board rows, in one transaction."""

import uuid

from django.db import transaction

from challenges.live import leaderboard_push_on_commit
from challenges.models import ChallengeAttempt, LeaderboardEntry
from core.errors import ApplicationError
from players.link_codes import end_user_link_by_code
from players.models import EndUser, Workspace


@transaction.atomic
def bridge_link_dify_user(*, workspace: Workspace, user: str, link_code: str) -> EndUser:
    """Link the Dify `user` with the player's `link_code`; returns the player's EndUser."""
    if not user:
        raise ApplicationError(
            "A link code links the Dify 'user' it is sent with; send 'user' too.",
            fields={"user": ["Required with link_code."]},
        )
    link = end_user_link_by_code(workspace=workspace, external_id=user, code=link_code)
    if link.new:
        end_user_attempts_and_boards_merge(into=link.player, source=link.dify)
    return link.player


def end_user_attempts_and_boards_merge(*, into: EndUser, source: EndUser) -> None:
    """`source`'s attempts become `into`'s; on each board the two rows become one."""
    ChallengeAttempt.objects.filter(end_user=source).update(
        end_user=into, account_id=into.account_id
    )
    entries = (
        LeaderboardEntry.objects.select_for_update(no_key=True)
        .filter(end_user__in=[into, source])
        .order_by("challenge_id", "end_user_id")
    )
    by_challenge: dict[uuid.UUID, dict] = {}
    for entry in entries:
        by_challenge.setdefault(entry.challenge_id, {})[entry.end_user_id] = entry
    for challenge_id, rows in by_challenge.items():
        theirs, ours = rows.get(source.pk), rows.get(into.pk)
        if theirs is None:
            continue
        if ours is None:
            LeaderboardEntry.objects.filter(pk=theirs.pk).update(end_user=into)
        else:
            _entry_keep_better(ours=ours, theirs=theirs)
        leaderboard_push_on_commit(challenge_id=challenge_id)


def _entry_keep_better(*, ours, theirs) -> None:
    """Keep one row, holding the better of the two entries (rank_value: lower is better,
    ties to the earlier one) and the earlier first success."""
    first_succeeded_at = min(ours.first_succeeded_at, theirs.first_succeeded_at)
    theirs_better = (theirs.rank_value, theirs.achieved_at) < (ours.rank_value, ours.achieved_at)
    theirs.delete()
    if theirs_better:
        for name in (
            "attempt_id",
            "rank_value",
            "achieved_at",
            "score",
            "judge_rating",
            "tokens_total",
            "elapsed_ms",
        ):
            setattr(ours, name, getattr(theirs, name))
    ours.first_succeeded_at = first_succeeded_at
    ours.save()
