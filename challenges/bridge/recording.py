"""The bridge lane's write: deliveries and attempts, many calls in one SQL statement.

The lane judges with what its process cache holds, so the statement first checks that
what it relied on still holds — the key is live, the challenge, its workspace (the event
window) and its secret are unchanged, no in-order collection holds the challenge and it
has no prerequisites (those are Django's path's, which checks the levels), it is in no wave
or in one open at the attempt's time (waves change without touching the challenge), the
Dify user is linked as it was —
and locks the player's row as `end_user_for_recording` does. Only then does it insert the
delivery (ON CONFLICT DO NOTHING: a repeat delivery writes nothing) and the attempt
behind it. One statement in autocommit is one transaction and one round trip.

Calls that reach this point while a statement is under way wait for it and then go
together in the next one (each worker keeps one statement in flight): under load a
statement carries a few dozen calls, idle it carries one and nobody waits for company.
Each call keeps its own outcome; rows are matched to calls by their new attempt's id.

A success that ranks better than the player's board entry is written here too, entry
included, when it lands below every row a live board shows on a board in no collection:
then the full path would write no event and push nothing either. Any other improvement
writes nothing here: the full path records it (`evaluation_finish`), with the board
upsert, the first-blood and record events in its transaction and the live pushes after.
"""

import asyncio
import functools
import weakref
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any

import orjson
import psycopg
from django.conf import settings
from django.db import connections

from challenges.bridge.limits import KEY_USE_RESOLUTION
from challenges.models import (
    BridgeDelivery,
    BridgeKey,
    Challenge,
    ChallengeAttempt,
    ChallengeCollection,
    ChallengePrerequisite,
    CollectionItem,
    LeaderboardEntry,
    Secret,
    Wave,
)
from challenges.services.attempts import leaderboard_upsert_sql
from core.aio_clients import pg_fetch
from players.models import EndUser, Workspace


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
    # The workspace as the lane's cache held it: its event window decides whether it plays.
    workspace_updated_at: datetime
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


# The most calls one statement carries.
BATCH_LIMIT = 64


def _columns() -> list[tuple[str, str, Any]]:
    """(name, SQL type, value getter) of every input column, attempt columns included."""
    connection = connections["default"]
    fixed: list[tuple[str, str, Any]] = [
        ("ord", "integer", None),
        ("player_id", "uuid", lambda r: r.player_id),
        ("account_id", "bigint", lambda r: r.account_id),
        ("identity_id", "uuid", lambda r: r.identity_id),
        ("linked_to_id", "uuid", lambda r: r.linked_to_id),
        ("key_id", "uuid", lambda r: r.key_id),
        ("challenge_id", "uuid", lambda r: r.challenge_id),
        ("challenge_updated_at", "timestamptz", lambda r: r.challenge_updated_at),
        ("workspace_id", "uuid", lambda r: r.workspace_id),
        ("workspace_updated_at", "timestamptz", lambda r: r.workspace_updated_at),
        ("secret_ref", "text", lambda r: r.secret_ref),
        ("secret_updated_at", "timestamptz", lambda r: r.secret_updated_at),
        ("endpoint", "text", lambda r: r.endpoint),
        ("workflow_run_id", "text", lambda r: r.workflow_run_id),
        ("response", "jsonb", lambda r: r.response),
        ("rank_value", "double precision", lambda r: r.rank_value),
        ("key_used_before", "timestamptz", lambda r: r.attempt.created_at - KEY_USE_RESOLUTION),
    ]
    for field in ChallengeAttempt._meta.concrete_fields:
        fixed.append((f"a_{field.column}", field.db_type(connection), _getter(field.attname)))
    return fixed


def _getter(attname: str):
    return lambda record: getattr(record.attempt, attname)


def _json_default(value: Any) -> str:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


@functools.cache
def _input_columns() -> tuple[tuple[str, str, Any], ...]:
    return tuple(_columns())


@functools.cache
def _statement() -> str:
    key_t = BridgeKey._meta.db_table
    challenge_t = Challenge._meta.db_table
    workspace_t = Workspace._meta.db_table
    secret_t = Secret._meta.db_table
    item_t = CollectionItem._meta.db_table
    collection_t = ChallengeCollection._meta.db_table
    prerequisite_t = ChallengePrerequisite._meta.db_table
    wave_t = Wave._meta.db_table
    wave_member_t = Wave.challenges.through._meta.db_table
    entry_t = LeaderboardEntry._meta.db_table
    end_user_t = EndUser._meta.db_table
    delivery_t = BridgeDelivery._meta.db_table
    attempt_t = ChallengeAttempt._meta.db_table
    inputs = _input_columns()
    columns = ", ".join(f"{name} {sql_type}" for name, sql_type, _ in inputs)
    attempt_columns = [name for name, _, _ in inputs if name.startswith("a_")]
    board_rows = (
        "SELECT challenge_id, player_id, a_id, rank_value, a_created_at, a_score, "
        "a_judge_rating, a_tokens_total, a_elapsed_ms, a_created_at FROM still "
        "WHERE ord IN (SELECT ord FROM quiet) "
        "AND a_id IN (SELECT attempt_id FROM delivery)"
    )
    # Only our own table and column names are interpolated; values go as parameters.
    return f"""
WITH input AS (
    SELECT * FROM json_to_recordset(%(rows)s::json) AS input({columns})
), player AS (
    SELECT id, linked_to_id, account_id FROM {end_user_t}
    WHERE id IN (SELECT player_id FROM input)
    ORDER BY id
    FOR NO KEY UPDATE
), still AS (
    SELECT input.* FROM input
    JOIN player ON player.id = input.player_id AND player.linked_to_id IS NULL
     AND player.account_id IS NOT DISTINCT FROM input.account_id
    WHERE EXISTS (SELECT 1 FROM {key_t} WHERE id = input.key_id AND revoked_at IS NULL)
      AND EXISTS (
          SELECT 1 FROM {challenge_t}
          WHERE id = input.challenge_id AND updated_at = input.challenge_updated_at
      )
      AND EXISTS (
          SELECT 1 FROM {workspace_t}
          WHERE id = input.workspace_id AND updated_at = input.workspace_updated_at
      )
      AND (
          SELECT max(updated_at) FROM {secret_t}
          WHERE workspace_id = input.workspace_id AND name = input.secret_ref
      ) IS NOT DISTINCT FROM input.secret_updated_at
      AND NOT EXISTS (
          SELECT 1 FROM {item_t} item JOIN {collection_t} collection
            ON collection.id = item.collection_id
          WHERE item.challenge_id = input.challenge_id AND collection.in_order
      )
      AND NOT EXISTS (
          SELECT 1 FROM {prerequisite_t} WHERE challenge_id = input.challenge_id
      )
      AND (
          NOT EXISTS (SELECT 1 FROM {wave_member_t} WHERE challenge_id = input.challenge_id)
          OR EXISTS (
              SELECT 1 FROM {wave_member_t} member JOIN {wave_t} wave ON wave.id = member.wave_id
              WHERE member.challenge_id = input.challenge_id
                AND wave.opens_at <= input.a_created_at AND wave.closes_at > input.a_created_at
          )
      )
      AND EXISTS (
          SELECT 1 FROM {end_user_t}
          WHERE id = input.identity_id AND linked_to_id IS NOT DISTINCT FROM input.linked_to_id
      )
), improves AS (
    SELECT still.ord FROM still
    WHERE still.a_succeeded AND NOT EXISTS (
        SELECT 1 FROM {entry_t} entry
        WHERE entry.challenge_id = still.challenge_id AND entry.end_user_id = still.player_id
          AND (entry.rank_value < still.rank_value
               OR (entry.rank_value = still.rank_value AND entry.achieved_at <= still.a_created_at))
    )
), shown AS (
    -- The board of each challenge a call improves on, as this snapshot shows it: the last
    -- row a live board shows, and whether a collection holds the challenge.
    SELECT challenge_id, last.rank_value AS last_rank, last.achieved_at AS last_at,
           EXISTS (SELECT 1 FROM {item_t} item WHERE item.challenge_id = batch.challenge_id)
             AS collected
    FROM (
        SELECT DISTINCT challenge_id FROM still WHERE ord IN (SELECT ord FROM improves)
    ) AS batch
    LEFT JOIN LATERAL (
        SELECT entry.rank_value, entry.achieved_at FROM {entry_t} entry
        WHERE entry.challenge_id = batch.challenge_id
        ORDER BY entry.rank_value, entry.achieved_at, entry.id
        OFFSET %(last_shown)s LIMIT 1
    ) AS last ON true
), quiet AS (
    -- Improvements that land below every shown row of a board in no collection: no event,
    -- no live push; written here, the best one per player.
    SELECT DISTINCT ON (still.challenge_id, still.player_id) still.ord
    FROM still JOIN shown USING (challenge_id)
    WHERE still.ord IN (SELECT ord FROM improves) AND NOT shown.collected
      AND shown.last_rank IS NOT NULL
      AND (still.rank_value, still.a_created_at) > (shown.last_rank, shown.last_at)
    ORDER BY still.challenge_id, still.player_id, still.rank_value, still.a_created_at
), delivery AS (
    INSERT INTO {delivery_t} (workspace_id, endpoint, workflow_run_id, attempt_id, response,
                              created_at)
    SELECT workspace_id, endpoint, workflow_run_id, a_id, response, a_created_at
    FROM still
    WHERE ord NOT IN (SELECT ord FROM improves) OR ord IN (SELECT ord FROM quiet)
    ORDER BY ord
    ON CONFLICT (workspace_id, endpoint, workflow_run_id) DO NOTHING
    RETURNING attempt_id
), new_attempt AS (
    INSERT INTO {attempt_t} ({", ".join(name[2:] for name in attempt_columns)})
    SELECT {", ".join(attempt_columns)} FROM still JOIN delivery ON delivery.attempt_id = still.a_id
    RETURNING id
), board AS (
    {leaderboard_upsert_sql(rows=board_rows)}
), key_use AS (
    UPDATE {key_t} AS bridge_key SET last_used_at = used.at
    FROM (
        SELECT key_id, max(a_created_at) AS at, max(key_used_before) AS before
        FROM still JOIN delivery ON delivery.attempt_id = still.a_id GROUP BY key_id
    ) AS used
    WHERE bridge_key.id = used.key_id
      AND (bridge_key.last_used_at IS NULL OR bridge_key.last_used_at < used.before)
)
SELECT input.ord,
       EXISTS (SELECT 1 FROM still WHERE still.ord = input.ord),
       EXISTS (SELECT 1 FROM improves WHERE improves.ord = input.ord)
         AND NOT EXISTS (SELECT 1 FROM quiet WHERE quiet.ord = input.ord),
       EXISTS (SELECT 1 FROM new_attempt WHERE new_attempt.id = input.a_id)
FROM input
"""  # noqa: S608


def _parameters(records: list[LaneRecord]) -> dict[str, Any]:
    # The calls as one JSON array of rows: one parameter for psycopg to send, where an array
    # per column costs it a dumper per column and element.
    getters = [(name, getter) for name, _, getter in _input_columns() if getter is not None]
    rows = [
        {"ord": ord_, **{name: getter(record) for name, getter in getters}}
        for ord_, record in enumerate(records)
    ]
    return {
        "rows": orjson.dumps(rows, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode(),
        "last_shown": settings.LEADERBOARD_DEFAULT_LIMIT - 1,
    }


def _outcome(holds: bool, improves: bool, recorded: bool) -> Outcome:
    if not holds:
        return Outcome.STALE
    if improves:
        return Outcome.BOARD_CHANGED
    return Outcome.RECORDED if recorded else Outcome.REPLAYED


async def _record_batch(records: list[LaneRecord]) -> list[Outcome]:
    # Safe to send twice: a delivery already written makes the call a replay.
    rows = await pg_fetch(_statement(), _parameters(records))
    outcomes = [Outcome.STALE] * len(records)
    for ord_, holds, improves, recorded in rows:
        outcomes[ord_] = _outcome(holds, improves, recorded)
    return outcomes


async def _record_apart(records: list[LaneRecord]) -> list[Outcome]:
    """A statement refused as a whole (an attempt's idempotency key taken by another
    path's attempt): each call alone, the refused one left to the full path."""
    outcomes = []
    for record in records:
        try:
            outcomes.extend(await _record_batch([record]))
        except psycopg.errors.UniqueViolation:
            outcomes.append(Outcome.STALE)
    return outcomes


class _Batcher:
    """One statement in flight per event loop; calls arriving meanwhile wait for the next."""

    def __init__(self) -> None:
        self.waiting: list[tuple[LaneRecord, asyncio.Future]] = []
        self.running = False

    async def record(self, record: LaneRecord) -> Outcome:
        future = asyncio.get_running_loop().create_future()
        self.waiting.append((record, future))
        if not self.running:
            self.running = True
            asyncio.get_running_loop().create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self.waiting:
                batch, self.waiting = self.waiting[:BATCH_LIMIT], self.waiting[BATCH_LIMIT:]
                records = [record for record, _ in batch]
                try:
                    try:
                        outcomes = await _record_batch(records)
                    except psycopg.errors.UniqueViolation:
                        outcomes = await _record_apart(records)
                except Exception as error:  # noqa: BLE001 - handed to each waiting call
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(error)
                    continue
                for (_, future), outcome in zip(batch, outcomes, strict=True):
                    if not future.done():
                        future.set_result(outcome)
        finally:
            self.running = False


_batchers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batcher]" = (
    weakref.WeakKeyDictionary()
)


async def player_row(*, workspace_id: Any, external_id: str) -> tuple | None:
    """(identity id, linked-to id, player id, player's external id, player's account id) of
    a Dify user already known in the workspace; the player is the account it is linked to."""
    end_user_t = EndUser._meta.db_table
    rows = await pg_fetch(
        f"SELECT identity.id, identity.linked_to_id, player.id, player.external_id, "  # noqa: S608
        f"player.account_id FROM {end_user_t} identity "
        f"JOIN {end_user_t} player ON player.id = coalesce(identity.linked_to_id, identity.id) "
        "WHERE identity.workspace_id = %s AND identity.external_id = %s",
        (workspace_id, external_id),
    )
    return rows[0] if rows else None


async def stored_response(*, workspace_id: Any, endpoint: str, workflow_run_id: str) -> dict | None:
    rows = await pg_fetch(
        f"SELECT response FROM {BridgeDelivery._meta.db_table} "  # noqa: S608
        "WHERE workspace_id = %s AND endpoint = %s AND workflow_run_id = %s",
        (workspace_id, endpoint, workflow_run_id),
    )
    return rows[0][0] if rows else None


async def record_in_one_statement(record: LaneRecord) -> Outcome:
    """Record the call with those waiting beside it; say what was done for it."""
    loop = asyncio.get_running_loop()
    batcher = _batchers.get(loop)
    if batcher is None:
        batcher = _batchers[loop] = _Batcher()
    return await batcher.record(record)
