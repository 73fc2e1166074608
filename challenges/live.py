"""The live leaderboard of a challenge: its channel-layer group and the push after a change.

A change does not draw a board in the writer's after-commit step: it asks for a coalesced
redraw (challenges/board_refresh.py), which draws and pushes each board once per short
interval however many writes changed it.
"""

import contextlib
import hashlib
import json
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from challenges.board_cache import board_cache_refresh
from challenges.board_refresh import board_drawer, board_refresh_soon
from challenges.models import (
    Challenge,
    ChallengeAttempt,
    ChallengeCollection,
    CollectionItem,
    LeaderboardEntry,
)
from challenges.selectors.collections import collections_public, leaderboard_for_collection
from challenges.selectors.standings import board_view_public
from notifications.live import group_send
from notifications.models import Event
from notifications.services import event_emit_on_commit
from players.models import Workspace


def leaderboard_group(challenge_id: Any) -> str:
    return f"leaderboard.challenge.{challenge_id}"


def leaderboard_push_on_commit(*, challenge_id: Any) -> None:
    """Once committed, drop the challenge's cached board and have it redrawn soon: stored
    as its cached board, and pushed to its open sockets with the board table's HTML, so
    no page fetches it again."""
    transaction.on_commit(
        lambda: board_refresh_soon(kind="challenge", board_id=challenge_id, drop_cached=True)
    )


def _challenge_board_draw(challenge_id: str) -> None:
    standings = board_cache_refresh(challenge_id=challenge_id)
    if standings is not None:
        group_send(
            group=leaderboard_group(challenge_id),
            message={"type": "leaderboard.changed", "standings": standings},
        )


board_drawer("challenge", _challenge_board_draw)


def board_head(*, challenge_id: Any) -> dict[str, Any] | None:
    """The board's #1 entry as the events need it (None on an empty board)."""
    return (
        LeaderboardEntry.objects.filter(challenge_id=challenge_id)
        .order_by("rank_value", "achieved_at", "id")
        .values(
            "attempt_id", "end_user_id", "score", "end_user__account_id", "end_user__external_id"
        )
        .first()
    )


def _player_id(account_id: Any, external_id: str) -> str:
    # The seed's payloads name players by account; a bridge player without a site account
    # is named by the `user` string its workflow sent.
    return str(account_id) if account_id is not None else external_id


def _players_told(challenge: Challenge) -> bool:
    """Whether players are told of first bloods and records now (in-app feed and mail).
    Not while the scoreboard is frozen, nor when the boards are hidden: the event would
    reveal a solve the boards do not show. Creators still get the event (their feed in the
    admin and console, their webhooks); players are not told later either."""
    # Read now: the caller's challenge may carry its workspace from a cache.
    workspace = Workspace.objects.only(
        "freeze_at", "freeze_lifted_at", "ends_at", "board_visibility"
    ).get(pk=challenge.workspace_id)
    return (
        workspace.board_cutoff() is None
        and workspace.board_visibility != workspace.BoardVisibility.HIDDEN
    )


def first_blood_key(*, challenge_id: Any) -> str:
    """The dedupe key of the challenge's current first blood: "first" until a review took
    one away, then one key per revocation, so concurrent emitters still collapse to one."""
    revoked = Event.objects.filter(
        type=Event.Type.FIRST_BLOOD_REVOKED, subject_id=str(challenge_id)
    ).count()
    return "first" if revoked == 0 else f"first:{revoked}"


def first_blood_holder(*, challenge_id: Any) -> ChallengeAttempt | None:
    """The earliest passing attempt: first blood is its (SPEC §10)."""
    return (
        ChallengeAttempt.objects.filter(challenge_id=challenge_id, succeeded=True)
        .select_related("end_user")
        .order_by("created_at", "id")
        .first()
    )


def first_blood_settle(*, challenge: Challenge, holder_before: ChallengeAttempt | None) -> None:
    """After a review changed a verdict, in its transaction: when the earliest passing
    attempt is no longer `holder_before`, tell its player first blood was revoked and
    announce the new holder's. Each event is stored once (its unique key)."""
    holder_after = first_blood_holder(challenge_id=challenge.id)
    before_id = holder_before.id if holder_before else None
    after_id = holder_after.id if holder_after else None
    if before_id == after_id:
        return
    told = _players_told(challenge)
    if holder_before is not None:
        generation = first_blood_key(challenge_id=challenge.id)
        loser = holder_before.account_id
        event_emit_on_commit(
            type=Event.Type.FIRST_BLOOD_REVOKED,
            workspace_id=challenge.workspace_id,
            subject_id=challenge.id,
            dedupe_key=f"revoked:{generation}",
            payload={
                "challenge_id": str(challenge.id),
                "account_id": _player_id(loser, holder_before.end_user.external_id),
                "attempt_id": str(holder_before.id),
                "new_holder": (
                    _player_id(holder_after.account_id, holder_after.end_user.external_id)
                    if holder_after
                    else None
                ),
            },
            occurred_at=timezone.now(),
            recipient_account_ids=[loser] if told and loser is not None else [],
        )
    if holder_after is not None:
        _first_blood_emit(
            challenge=challenge,
            attempt=holder_after,
            dedupe_key=first_blood_key(challenge_id=challenge.id),
            occurred_at=timezone.now(),
            told=told,
        )


def _first_blood_emit(
    *,
    challenge: Challenge,
    attempt: ChallengeAttempt,
    dedupe_key: str,
    occurred_at: datetime,
    told: bool,
    codename: str = "",
) -> None:
    """The first-blood event of `attempt`: on the challenge (its other players told when
    `told`) or, with `codename`, on one of its targets (no player told)."""
    payload = {
        "challenge_id": str(challenge.id),
        "scoring_strategy": challenge.scoring_strategy,
        "account_id": _player_id(attempt.account_id, attempt.end_user.external_id),
        "score": attempt.score,
    }
    if codename:
        payload["codename"] = codename
    recipients = []
    if told:
        recipients = list(
            ChallengeAttempt.objects.filter(challenge_id=challenge.id, account_id__isnull=False)
            .exclude(account_id=attempt.account_id)
            .values_list("account_id", flat=True)
            .distinct()
        )
    event_emit_on_commit(
        type=Event.Type.CHALLENGE_FIRST_BLOOD,
        workspace_id=challenge.workspace_id,
        subject_id=challenge.id,
        dedupe_key=dedupe_key,
        payload=payload,
        occurred_at=occurred_at,
        recipient_account_ids=recipients,
    )


def attempt_events_emit(
    *, challenge: Challenge, attempt: ChallengeAttempt, previous_head: dict[str, Any] | None
) -> None:
    """Inside the attempt's transaction, after its entry changed: first blood when the board
    was empty, record beaten when this attempt is the new #1. Each is stored once (the
    event's unique key) and delivered after the commit."""
    player = _player_id(attempt.account_id, attempt.end_user.external_id)
    told = _players_told(challenge)
    if previous_head is None:
        _first_blood_emit(
            challenge=challenge,
            attempt=attempt,
            dedupe_key=first_blood_key(challenge_id=challenge.id),
            occurred_at=attempt.created_at,
            told=told,
        )
        return
    if previous_head["attempt_id"] == attempt.id:
        return
    head = board_head(challenge_id=challenge.id)
    if head is None or head["attempt_id"] != attempt.id:
        return
    previous_account = previous_head["end_user__account_id"]
    event_emit_on_commit(
        type="challenge_record_beaten",
        workspace_id=challenge.workspace_id,
        subject_id=challenge.id,
        # One event per record surpassed, however many attempts beat it at once.
        dedupe_key=f"beaten:{previous_head['attempt_id']}",
        payload={
            "challenge_id": str(challenge.id),
            "scoring_strategy": challenge.scoring_strategy,
            "previous_record": {
                "account_id": _player_id(previous_account, previous_head["end_user__external_id"]),
                "score": previous_head["score"],
            },
            "new_record": {"account_id": player, "score": attempt.score},
        },
        occurred_at=attempt.created_at,
        recipient_account_ids=(
            [previous_account]
            if told and previous_account is not None and previous_account != attempt.account_id
            else []
        ),
    )


def target_first_blood_emit(*, challenge: Challenge, attempt: ChallengeAttempt) -> bool:
    """Inside a win's transaction, for a challenge with several targets: first blood on the
    attempt's target (an event per codename, stored once; it names the codename, never the
    model). Returns whether this is the player's first win on that target, which changes
    the targets they have broken."""
    if not attempt.codename:
        return False
    wins = ChallengeAttempt.objects.filter(
        challenge_id=challenge.id, codename=attempt.codename, succeeded=True
    ).exclude(id=attempt.id)
    if wins.exists():
        return not wins.filter(end_user_id=attempt.end_user_id).exists()
    _first_blood_emit(
        challenge=challenge,
        attempt=attempt,
        dedupe_key=f"first:{attempt.codename}",
        occurred_at=attempt.created_at,
        told=False,
        codename=attempt.codename,
    )
    return True


def collection_group(collection_id: Any) -> str:
    return f"leaderboard.collection.{collection_id}"


def collection_standings(*, collection: ChallengeCollection) -> dict[str, Any]:
    """What a live collection board shows, as JSON (the web API's leaderboard shape), with
    the board's HTML as every viewer sees it (the page's script marks the own row): the
    public board, frozen while the event is."""
    view = board_view_public(workspace=collection.workspace)
    board = leaderboard_for_collection(
        collection=collection, limit=settings.LEADERBOARD_DEFAULT_LIMIT, view=view
    )
    html = render_to_string(
        "challenges/_collection_board_rows.html",
        {
            "leaderboard": board,
            "leaderboard_unavailable": "",
            "own_end_user_id": "",
            "frozen_at": view.cutoff,
        },
    )
    return {
        "type": "collection_leaderboard",
        "audience": collection.workspace.board_visibility,
        "frozen_at": view.cutoff.isoformat() if view.cutoff else None,
        "collection_id": str(board.collection_id),
        "scoring_strategy": board.scoring_strategy,
        "metric": board.metric,
        "challenge_count": board.challenge_count,
        "limit": board.limit,
        "entries": [
            {
                "rank": row.rank,
                "player": row.player,
                "source": row.source,
                "end_user_id": row.end_user_id,
                "solved": row.solved,
                "value": row.value,
                "last_achieved_at": row.last_achieved_at.isoformat(),
            }
            for row in board.entries
        ],
        "html": html,
    }


def _shown(standings: dict[str, Any]) -> str:
    # What a client sees; the last solve times only break ties, so they are left out.
    rows = [
        (row["rank"], row["player"], row["end_user_id"], row["solved"], row["value"])
        for row in standings["entries"]
    ]
    return hashlib.sha256(
        json.dumps([standings["challenge_count"], rows], default=str).encode()
    ).hexdigest()


def collection_boards_push_on_commit(*, challenge_id: Any) -> None:
    """Once committed, have each public collection holding the challenge redrawn soon and
    pushed to its open sockets when what it shows changed since the last push."""

    def mark() -> None:
        collection_ids = CollectionItem.objects.filter(challenge_id=challenge_id).values(
            "collection_id"
        )
        for collection_id in (
            collections_public().filter(id__in=collection_ids).values_list("id", flat=True)
        ):
            board_refresh_soon(kind="collection", board_id=collection_id)

    transaction.on_commit(mark)


def _collection_board_draw(collection_id: str) -> None:
    collection = collections_public().filter(id=collection_id).select_related("workspace").first()
    if collection is None:
        return
    standings = collection_standings(collection=collection)
    key = f"live:collection:{collection.id}:shown"
    shown = _shown(standings)
    try:
        if cache.get(key) == shown:
            return
        cache.set(key, shown, timeout=3600)
    except Exception:  # noqa: S110 - a cache that is down means: push anyway
        pass
    group_send(
        group=collection_group(collection.id),
        message={"type": "leaderboard.changed", "standings": standings},
    )


board_drawer("collection", _collection_board_draw)


def workspace_boards_push_on_commit(*, workspace_id: Any) -> None:
    """Once committed, redraw and push every board of the workspace: its event settings
    (freeze, visibility) changed what each shows, though no row changed."""
    challenge_ids = list(
        Challenge.objects.filter(workspace_id=workspace_id).values_list("id", flat=True)
    )
    for challenge_id in challenge_ids:
        leaderboard_push_on_commit(challenge_id=challenge_id)

    def send_collections() -> None:
        for collection in (
            collections_public().filter(workspace_id=workspace_id).select_related("workspace")
        ):
            # A cache that is down means: push anyway.
            with contextlib.suppress(Exception):
                cache.delete(f"live:collection:{collection.id}:shown")
            group_send(
                group=collection_group(collection.id),
                message={
                    "type": "leaderboard.changed",
                    "standings": collection_standings(collection=collection),
                },
            )

    transaction.on_commit(send_collections)
