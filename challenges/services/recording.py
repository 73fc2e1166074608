"""The recorder: attempts, their deliveries and their side rows, many calls in one SQL
statement. The bridge's lane, Django's bridge view and web play all record through it.

A call that judged with what a process cache holds (`Held`, the lane) has the statement
first check that what it relied on still holds — the key is live, the challenge, its
workspace (the event window), its secret and its model's price (what the spend is
priced at) are unchanged, no in-order collection holds the challenge and it has no
prerequisites (those are Django's path's, which checks the levels), it is in no wave or
in one open at the attempt's time (waves change without touching the challenge), the Dify
user is linked as it was. Every call locks the player's
row as `end_user_for_recording` does, and is recorded only while the player is still no
one else's link. Then the statement inserts the delivery when there is one (ON CONFLICT DO
NOTHING: a repeat delivery writes nothing), the attempt, its own text (the player's masked
copy when the attempt row keeps none), its spend on the workspace, challenge and player
rows with its budget hold dropped (`spend_settle`'s rows, summed per row over the batch),
and the key's last use. One statement in autocommit is one transaction and one round trip.

Calls that reach this point while a statement is under way wait for it and then go
together in the next one (each worker keeps one statement in flight): under load a
statement carries a few dozen calls, idle it carries one and nobody waits for company.
Each call keeps its own outcome; rows are matched to calls by their new attempt's id.

A success that ranks better than the player's board entry is written here too, entry
included, when it lands below every row a live board shows on a board in no collection
(`board_improves_sql`, `board_last_shown_sql`: the rules `attempt_record` uses): then the
full path would write no event and push nothing either. Any other improvement writes
nothing here: the full path records it (`attempt_record`), with the board upsert, the
first-blood and record events in its transaction and the live pushes after.
"""

import dataclasses
import functools
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any

import orjson
import psycopg
from django.db import connections

from challenges.bridge.limits import key_use_due_sql
from challenges.models import (
    AttemptOwnText,
    BridgeDelivery,
    BridgeKey,
    BudgetHold,
    Challenge,
    ChallengeAttempt,
    ChallengeCollection,
    ChallengePrerequisite,
    CollectionItem,
    LeaderboardEntry,
    ModelPrice,
    Secret,
    Wave,
)
from challenges.services.attempts import (
    attempt_build,
    board_improves_sql,
    board_last_shown_offset,
    board_last_shown_sql,
    leaderboard_upsert_sql,
    own_text_kept,
)
from challenges.services.budgets import (
    JudgeUse,
    Meter,
    SpendAmounts,
    judge_use_priced,
    spend_add_sql,
    spend_amounts,
)
from core.aio_clients import pg_fetch
from core.batching import LoopBatcher
from core.threads import run_orm
from judging.verdicts import Verdict
from players.models import EndUser, Workspace


class Outcome(Enum):
    RECORDED = "recorded"
    REPLAYED = "replayed"
    # What the caller relied on has changed: the full path answers instead.
    STALE = "stale"
    BOARD_CHANGED = "board_changed"


@dataclass(frozen=True)
class Held:
    """What a process cache held when the call was judged, checked again at write time."""

    key_id: Any
    challenge_updated_at: datetime
    # The workspace as the cache held it: its event window decides whether it plays.
    workspace_updated_at: datetime
    secret_ref: str
    secret_updated_at: datetime | None
    identity_id: Any
    linked_to_id: Any
    # The workspace's price of the challenge's model (`meter_unheld`) the spend was priced
    # at: when it was last set, None while it has none.
    price_model: str = ""
    price_updated_at: datetime | None = None


@dataclass(frozen=True)
class Delivery:
    """The bridge call the attempt answers, stored for its replays."""

    key_id: Any
    endpoint: str
    workflow_run_id: str
    response: dict[str, Any]


@dataclass(frozen=True)
class AttemptRecord:
    """An attempt (`attempt_build`'s, unsaved) and what is written with it."""

    attempt: ChallengeAttempt
    rank_value: float | None
    held: Held | None = None
    delivery: Delivery | None = None
    # (prompt, response), masked: the player's copy when the attempt row keeps no text.
    own_text: tuple[str, str] | None = None
    spend: SpendAmounts | None = None
    # The budget hold the attempt's use replaces (docs/budgets.md).
    hold_id: Any = None


# The most calls one statement carries.
BATCH_LIMIT = 64


def _held(name: str):
    return lambda record: getattr(record.held, name) if record.held else None


def _delivery(name: str):
    return lambda record: getattr(record.delivery, name) if record.delivery else None


def _own_text(index: int):
    return lambda record: record.own_text[index] if record.own_text else None


def _spend(name: str):
    return lambda record: getattr(record.spend, name) if record.spend else None


def _columns() -> list[tuple[str, str, Any]]:
    """(name, SQL type, value getter) of every input column, attempt columns included."""
    connection = connections["default"]
    fixed: list[tuple[str, str, Any]] = [
        ("ord", "integer", None),
        ("player_id", "uuid", lambda r: r.attempt.end_user_id),
        ("account_id", "bigint", lambda r: r.attempt.account_id),
        ("held", "boolean", lambda r: r.held is not None),
        ("identity_id", "uuid", _held("identity_id")),
        ("linked_to_id", "uuid", _held("linked_to_id")),
        ("challenge_updated_at", "timestamptz", _held("challenge_updated_at")),
        ("workspace_updated_at", "timestamptz", _held("workspace_updated_at")),
        ("secret_ref", "text", _held("secret_ref")),
        ("secret_updated_at", "timestamptz", _held("secret_updated_at")),
        ("price_model", "text", _held("price_model")),
        ("price_updated_at", "timestamptz", _held("price_updated_at")),
        ("key_id", "uuid", _delivery("key_id")),
        ("delivered", "boolean", lambda r: r.delivery is not None),
        ("endpoint", "text", _delivery("endpoint")),
        ("workflow_run_id", "text", _delivery("workflow_run_id")),
        ("response", "jsonb", _delivery("response")),
        ("rank_value", "double precision", lambda r: r.rank_value),
        ("own_prompt", "text", _own_text(0)),
        ("own_response", "text", _own_text(1)),
        ("spend_tokens", "bigint", _spend("tokens")),
        ("spend_cost", "numeric", _spend("cost")),
        ("spend_judge_tokens", "bigint", _spend("judge_tokens")),
        ("spend_judge_cost", "numeric", _spend("judge_cost")),
        ("hold_id", "uuid", lambda r: r.hold_id),
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
    own_text_t = AttemptOwnText._meta.db_table
    hold_t = BudgetHold._meta.db_table
    price_t = ModelPrice._meta.db_table
    inputs = _input_columns()
    columns = ", ".join(f"{name} {sql_type}" for name, sql_type, _ in inputs)
    attempt_columns = [name for name, _, _ in inputs if name.startswith("a_")]
    board_rows = (
        "SELECT a_challenge_id, player_id, a_id, rank_value, a_created_at, a_score, "
        "a_judge_rating, a_tokens_total, a_elapsed_ms, a_created_at FROM written "
        "WHERE ord IN (SELECT ord FROM quiet)"
    )
    # Each scope's row once per statement (ON CONFLICT may change a row once), in the
    # reservation's lock order: workspace, challenge, player.
    spend_rows = (
        "SELECT workspace_id, scope.challenge_id, scope.end_user_id, sum(spend_tokens), "
        "sum(spend_cost), sum(spend_judge_tokens), sum(spend_judge_cost) "
        "FROM (SELECT a_workspace_id AS workspace_id, a_challenge_id AS challenge_id, player_id, "
        "spend_tokens, spend_cost, spend_judge_tokens, spend_judge_cost FROM written "
        "WHERE spend_tokens IS NOT NULL) AS used "
        "CROSS JOIN LATERAL (VALUES (0, NULL::uuid, NULL::uuid), (1, used.challenge_id, NULL), "
        "(2, used.challenge_id, used.player_id)) AS scope(level, challenge_id, end_user_id) "
        "GROUP BY scope.level, workspace_id, scope.challenge_id, scope.end_user_id "
        "ORDER BY scope.level, workspace_id, scope.challenge_id, scope.end_user_id"
    )
    entry_ranks_at_least_as_well = (
        f"NOT ({board_improves_sql(new='still', new_at='still.a_created_at', entry='entry')})"
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
    WHERE (input.key_id IS NULL OR EXISTS (
          SELECT 1 FROM {key_t} WHERE id = input.key_id AND revoked_at IS NULL
      ))
      AND (NOT input.held OR (EXISTS (
          SELECT 1 FROM {challenge_t}
          WHERE id = input.a_challenge_id AND updated_at = input.challenge_updated_at
      )
      AND EXISTS (
          SELECT 1 FROM {workspace_t}
          WHERE id = input.a_workspace_id AND updated_at = input.workspace_updated_at
      )
      AND (
          SELECT max(updated_at) FROM {secret_t}
          WHERE workspace_id = input.a_workspace_id AND name = input.secret_ref
      ) IS NOT DISTINCT FROM input.secret_updated_at
      AND (
          SELECT max(updated_at) FROM {price_t}
          WHERE workspace_id = input.a_workspace_id AND model = input.price_model
      ) IS NOT DISTINCT FROM input.price_updated_at
      AND NOT EXISTS (
          SELECT 1 FROM {item_t} item JOIN {collection_t} collection
            ON collection.id = item.collection_id
          WHERE item.challenge_id = input.a_challenge_id AND collection.in_order
      )
      AND NOT EXISTS (
          SELECT 1 FROM {prerequisite_t} WHERE challenge_id = input.a_challenge_id
      )
      AND (
          NOT EXISTS (SELECT 1 FROM {wave_member_t} WHERE challenge_id = input.a_challenge_id)
          OR EXISTS (
              SELECT 1 FROM {wave_member_t} member JOIN {wave_t} wave ON wave.id = member.wave_id
              WHERE member.challenge_id = input.a_challenge_id
                AND wave.opens_at <= input.a_created_at AND wave.closes_at > input.a_created_at
          )
      )
      AND EXISTS (
          SELECT 1 FROM {end_user_t}
          WHERE id = input.identity_id AND linked_to_id IS NOT DISTINCT FROM input.linked_to_id
      )))
), improves AS (
    SELECT still.ord FROM still
    WHERE still.a_succeeded AND NOT EXISTS (
        SELECT 1 FROM {entry_t} entry
        WHERE entry.challenge_id = still.a_challenge_id AND entry.end_user_id = still.player_id
          AND {entry_ranks_at_least_as_well}
    )
), shown AS (
    -- The board of each challenge a call improves on, as this snapshot shows it: the last
    -- row a live board shows, and whether a collection holds the challenge.
    SELECT challenge_id, last.rank_value AS last_rank, last.achieved_at AS last_at,
           EXISTS (SELECT 1 FROM {item_t} item WHERE item.challenge_id = batch.challenge_id)
             AS collected
    FROM (
        SELECT DISTINCT a_challenge_id AS challenge_id FROM still
        WHERE ord IN (SELECT ord FROM improves)
    ) AS batch
    LEFT JOIN LATERAL (
        {board_last_shown_sql(challenge="batch.challenge_id", offset="%(last_shown)s")}
    ) AS last ON true
), quiet AS (
    -- Improvements that land below every shown row of a board in no collection: no event,
    -- no live push; written here, the best one per player.
    SELECT DISTINCT ON (still.a_challenge_id, still.player_id) still.ord
    FROM still JOIN shown ON shown.challenge_id = still.a_challenge_id
    WHERE still.ord IN (SELECT ord FROM improves) AND NOT shown.collected
      AND shown.last_rank IS NOT NULL
      AND (still.rank_value, still.a_created_at) > (shown.last_rank, shown.last_at)
    ORDER BY still.a_challenge_id, still.player_id, still.rank_value, still.a_created_at
), recordable AS (
    SELECT ord FROM still
    WHERE ord NOT IN (SELECT ord FROM improves) OR ord IN (SELECT ord FROM quiet)
), delivery AS (
    INSERT INTO {delivery_t} (workspace_id, endpoint, workflow_run_id, attempt_id, response,
                              created_at)
    SELECT a_workspace_id, endpoint, workflow_run_id, a_id, response, a_created_at
    FROM still
    WHERE delivered AND ord IN (SELECT ord FROM recordable)
    ORDER BY ord
    ON CONFLICT (workspace_id, endpoint, workflow_run_id) DO NOTHING
    RETURNING attempt_id
), written AS (
    SELECT still.* FROM still
    WHERE ord IN (SELECT ord FROM recordable)
      AND (NOT delivered OR a_id IN (SELECT attempt_id FROM delivery))
), new_attempt AS (
    INSERT INTO {attempt_t} ({", ".join(name[2:] for name in attempt_columns)})
    SELECT {", ".join(attempt_columns)} FROM written
    RETURNING id
), own_text AS (
    INSERT INTO {own_text_t} (attempt_id, prompt, response)
    SELECT a_id, own_prompt, own_response FROM written WHERE own_prompt IS NOT NULL
), hold AS (
    DELETE FROM {hold_t} WHERE id IN (SELECT hold_id FROM written)
), spend AS (
    {spend_add_sql(rows=spend_rows)}
), board AS (
    {leaderboard_upsert_sql(rows=board_rows)}
), key_use AS (
    UPDATE {key_t} AS bridge_key SET last_used_at = used.at
    FROM (
        SELECT key_id, max(a_created_at) AS at FROM written
        WHERE key_id IS NOT NULL GROUP BY key_id
    ) AS used
    WHERE bridge_key.id = used.key_id
      AND {key_use_due_sql(last_used="bridge_key.last_used_at", now="used.at")}
)
SELECT input.ord,
       EXISTS (SELECT 1 FROM still WHERE still.ord = input.ord),
       EXISTS (SELECT 1 FROM improves WHERE improves.ord = input.ord)
         AND NOT EXISTS (SELECT 1 FROM quiet WHERE quiet.ord = input.ord),
       EXISTS (SELECT 1 FROM new_attempt WHERE new_attempt.id = input.a_id)
FROM input
"""  # noqa: S608


def _parameters(records: list[AttemptRecord]) -> dict[str, Any]:
    # The calls as one JSON array of rows: one parameter for psycopg to send, where an array
    # per column costs it a dumper per column and element.
    getters = [(name, getter) for name, _, getter in _input_columns() if getter is not None]
    rows = [
        {"ord": ord_, **{name: getter(record) for name, getter in getters}}
        for ord_, record in enumerate(records)
    ]
    return {
        "rows": orjson.dumps(rows, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode(),
        "last_shown": board_last_shown_offset(),
    }


def _outcome(holds: bool, improves: bool, recorded: bool) -> Outcome:
    if not holds:
        return Outcome.STALE
    if improves:
        return Outcome.BOARD_CHANGED
    return Outcome.RECORDED if recorded else Outcome.REPLAYED


async def _record_batch(records: list[AttemptRecord]) -> list[Outcome]:
    # Safe to send twice: a delivery already written makes the call a replay.
    rows = await pg_fetch(_statement(), _parameters(records))
    outcomes = [Outcome.STALE] * len(records)
    for ord_, holds, improves, recorded in rows:
        outcomes[ord_] = _outcome(holds, improves, recorded)
    return outcomes


async def _record_apart(records: list[AttemptRecord]) -> list[Outcome]:
    """A statement refused as a whole (an attempt's idempotency key taken by another
    path's attempt): each call alone, the refused one left to the full path."""
    outcomes = []
    for record in records:
        try:
            outcomes.extend(await _record_batch([record]))
        except psycopg.errors.UniqueViolation:
            outcomes.append(Outcome.STALE)
    return outcomes


async def _record(records: list[AttemptRecord]) -> list[Outcome]:
    try:
        return await _record_batch(records)
    except psycopg.errors.UniqueViolation:
        return await _record_apart(records)


_recorder: LoopBatcher[AttemptRecord, Outcome] = LoopBatcher(_record, limit=BATCH_LIMIT)


async def record_in_one_statement(record: AttemptRecord) -> Outcome:
    """Record the call with those waiting beside it; say what was done for it."""
    return await _recorder.submit(record)


async def verdict_priced(*, verdict: Verdict, workspace_id) -> tuple[Verdict, JudgeUse]:
    """`judge_use_priced` from the event loop: a read only when an LLM judged the call."""
    if verdict.usage or verdict.check_usage:
        return await run_orm(judge_use_priced, verdict=verdict, workspace_id=workspace_id)
    return judge_use_priced(verdict=verdict, workspace_id=None)


async def attempt_record_async(
    *,
    challenge: Challenge,
    end_user: EndUser,
    verdict: Verdict,
    secret: str | None,
    prompt: str = "",
    response: str = "",
    tokens_total: int | None = None,
    elapsed_ms: int | None = None,
    source: str = ChallengeAttempt.Source.WEB,
    workflow_run_id: str = "",
    custom_score: float | None = None,
    disclosed_secret: bool = False,
    own_text: tuple[str, str] | None = None,
    cost=None,
    meter: Meter | None = None,
    codename: str = "",
    delivery: Delivery | None = None,
) -> tuple[Outcome, ChallengeAttempt]:
    """`attempt_record` for a play whose player and challenge were just read (no `Held`):
    the attempt built and priced as it builds it, recorded by the statement with the
    player's own text, the spend (with a `meter`) and the `delivery` (its answer gets the
    attempt's id). Only an attempt that is no win and not under review: a win's proof,
    copy check and board events, and a review, are `attempt_record`'s. Nothing is written
    unless the outcome is RECORDED."""
    if verdict.passed or verdict.under_review:
        raise ValueError("A win or an attempt under review is recorded by attempt_record.")
    verdict, judge_use = await verdict_priced(verdict=verdict, workspace_id=challenge.workspace_id)
    attempt, standing = attempt_build(
        challenge=challenge,
        end_user=end_user,
        verdict=verdict,
        prompt=prompt,
        response=response,
        tokens_total=tokens_total,
        elapsed_ms=elapsed_ms,
        source=source,
        idempotency_key=workflow_run_id or None,
        workflow_run_id=workflow_run_id,
        custom_score=custom_score,
        secret=secret,
        disclosed_secret=disclosed_secret,
        cost=cost,
        codename=codename,
        judge_use=judge_use,
    )
    if delivery is not None:
        delivery = dataclasses.replace(
            delivery, response={**delivery.response, "attempt_id": str(attempt.id)}
        )
    record = AttemptRecord(
        attempt=attempt,
        rank_value=standing.rank_value,
        delivery=delivery,
        own_text=own_text_kept(attempt=attempt, own_text=own_text, secret=secret),
        spend=(
            spend_amounts(tokens=tokens_total, cost=cost, judge=judge_use)
            if meter is not None
            else None
        ),
        hold_id=meter.hold_id if meter is not None else None,
    )
    return await record_in_one_statement(record), attempt
