"""The bridge lane's write: delivery, attempt and board entry in one SQL statement.

The lane judges with what its process cache holds, so the statement first checks that
what it relied on still holds — the key is live, the challenge and its secret are
unchanged, no in-order collection holds the challenge, the Dify user is linked as it was —
and locks the player's row as `end_user_for_recording` does. Only then does it insert the
delivery (ON CONFLICT DO NOTHING: a repeat delivery writes nothing) and the attempt
behind it. One statement in autocommit is one transaction and one round trip.

A success that would rank better than the player's board entry writes nothing here: the
full path records it (`evaluation_finish`), with the board upsert, the first-blood and
record events in its transaction and the live pushes after it. A board changes far less
often than an attempt lands.
"""

import functools
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

import psycopg
from django.db import connections

from challenges.models import (
    BridgeDelivery,
    BridgeKey,
    Challenge,
    ChallengeAttempt,
    ChallengeCollection,
    CollectionItem,
    LeaderboardEntry,
    Secret,
)
from core.aio_clients import pg_pool
from players.models import EndUser

# A key's last use is written at most once a minute.
KEY_USE_RESOLUTION = timedelta(seconds=60)


class Outcome(Enum):
    RECORDED = "recorded"
    REPLAYED = "replayed"
    # What the lane's cache held has changed: the full path answers instead.
    STALE = "stale"
    BOARD_CHANGED = "board_changed"


@dataclass(frozen=True)
class LaneRecord:
    """What the lane relied on and what it writes."""

    key_id: Any
    workspace_id: Any
    challenge_id: Any
    challenge_updated_at: datetime
    secret_ref: str
    secret_updated_at: datetime | None
    identity_id: Any
    linked_to_id: Any
    player_id: Any
    account_id: Any
    attempt: ChallengeAttempt
    rank_value: float
    endpoint: str
    workflow_run_id: str
    response: dict[str, Any]


@functools.cache
def _attempt_columns() -> tuple[str, ...]:
    return tuple(field.column for field in ChallengeAttempt._meta.concrete_fields)


@functools.cache
def _statement() -> str:
    key_t = BridgeKey._meta.db_table
    challenge_t = Challenge._meta.db_table
    secret_t = Secret._meta.db_table
    item_t = CollectionItem._meta.db_table
    entry_t = LeaderboardEntry._meta.db_table
    collection_t = ChallengeCollection._meta.db_table
    end_user_t = EndUser._meta.db_table
    delivery_t = BridgeDelivery._meta.db_table
    attempt_t = ChallengeAttempt._meta.db_table
    columns = _attempt_columns()
    attempt_values = ", ".join(f"%(a_{name})s" for name in columns)
    # Only our own table and column names are interpolated; values go as parameters.
    return f"""
WITH player AS (
    SELECT id FROM {end_user_t}
    WHERE id = %(player_id)s AND linked_to_id IS NULL
      AND account_id IS NOT DISTINCT FROM %(account_id)s
    FOR NO KEY UPDATE
), still AS (
    SELECT 1 AS holds
    WHERE EXISTS (SELECT 1 FROM player)
      AND EXISTS (SELECT 1 FROM {key_t} WHERE id = %(key_id)s AND revoked_at IS NULL)
      AND EXISTS (
          SELECT 1 FROM {challenge_t}
          WHERE id = %(challenge_id)s AND updated_at = %(challenge_updated_at)s
      )
      AND (
          SELECT max(updated_at) FROM {secret_t}
          WHERE workspace_id = %(workspace_id)s AND name = %(secret_ref)s
      ) IS NOT DISTINCT FROM %(secret_updated_at)s::timestamptz
      AND NOT EXISTS (
          SELECT 1 FROM {item_t} item JOIN {collection_t} collection
            ON collection.id = item.collection_id
          WHERE item.challenge_id = %(challenge_id)s AND collection.in_order
      )
      AND EXISTS (
          SELECT 1 FROM {end_user_t}
          WHERE id = %(identity_id)s AND linked_to_id IS NOT DISTINCT FROM %(linked_to_id)s::uuid
      )
), improves AS (
    SELECT 1 WHERE %(succeeded)s AND NOT EXISTS (
        SELECT 1 FROM {entry_t}
        WHERE challenge_id = %(challenge_id)s AND end_user_id = %(player_id)s
          AND (rank_value < %(rank_value)s
               OR (rank_value = %(rank_value)s AND achieved_at <= %(now)s))
    )
), delivery AS (
    INSERT INTO {delivery_t} (workspace_id, endpoint, workflow_run_id, attempt_id, response,
                              created_at)
    SELECT %(workspace_id)s, %(endpoint)s, %(workflow_run_id)s, %(attempt_id)s, %(response)s,
           %(now)s
    FROM still WHERE NOT EXISTS (SELECT 1 FROM improves)
    ON CONFLICT (workspace_id, endpoint, workflow_run_id) DO NOTHING
    RETURNING 1
), new_attempt AS (
    INSERT INTO {attempt_t} ({", ".join(columns)})
    SELECT {attempt_values} FROM delivery
    RETURNING 1
), key_use AS (
    UPDATE {key_t} SET last_used_at = %(now)s
    WHERE id = %(key_id)s AND EXISTS (SELECT 1 FROM delivery)
      AND (last_used_at IS NULL OR last_used_at < %(key_used_before)s)
)
SELECT (SELECT count(*) FROM still), (SELECT count(*) FROM improves),
       (SELECT count(*) FROM new_attempt)
"""  # noqa: S608


def _parameters(record: LaneRecord) -> dict[str, Any]:
    connection = connections["default"]
    attempt = record.attempt
    values = {
        f"a_{field.column}": field.get_db_prep_save(getattr(attempt, field.attname), connection)
        for field in ChallengeAttempt._meta.concrete_fields
    }
    response_field = BridgeDelivery._meta.get_field("response")
    return {
        **values,
        "player_id": record.player_id,
        "account_id": record.account_id,
        "key_id": record.key_id,
        "challenge_id": record.challenge_id,
        "challenge_updated_at": record.challenge_updated_at,
        "workspace_id": record.workspace_id,
        "secret_ref": record.secret_ref,
        "secret_updated_at": record.secret_updated_at,
        "identity_id": record.identity_id,
        "linked_to_id": record.linked_to_id,
        "endpoint": record.endpoint,
        "workflow_run_id": record.workflow_run_id,
        "attempt_id": attempt.id,
        "response": response_field.get_db_prep_save(record.response, connection),
        "now": attempt.created_at,
        "rank_value": record.rank_value,
        "succeeded": attempt.succeeded,
        "key_used_before": attempt.created_at - KEY_USE_RESOLUTION,
    }


async def stored_response(*, workspace_id: Any, endpoint: str, workflow_run_id: str) -> dict | None:
    pool = await pg_pool()
    async with pool.connection() as connection:
        cursor = await connection.execute(
            f"SELECT response FROM {BridgeDelivery._meta.db_table} "  # noqa: S608
            "WHERE workspace_id = %s AND endpoint = %s AND workflow_run_id = %s",
            (workspace_id, endpoint, workflow_run_id),
        )
        row = await cursor.fetchone()
    return row[0] if row else None


async def record_in_one_statement(record: LaneRecord) -> Outcome:
    """Run the statement (its own transaction) and say what it did."""
    pool = await pg_pool()
    async with pool.connection() as connection:
        try:
            cursor = await connection.execute(_statement(), _parameters(record))
        except psycopg.errors.UniqueViolation:
            # The attempt's idempotency key is taken by another path's attempt: the full
            # path knows how to answer that.
            return Outcome.STALE
        holds, improves, recorded = await cursor.fetchone()
    if not holds:
        return Outcome.STALE
    if improves:
        return Outcome.BOARD_CHANGED
    return Outcome.RECORDED if recorded else Outcome.REPLAYED
