"""Leaderboard benchmark: 1,000,000 attempts by 100,000 players over 10 challenges.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/phc_bench .venv/bin/python bench/leaderboard.py

Fills the data with set-based SQL (the leaderboard rows exactly as attempt_record would
have left them), then times the read paths and the write path through the real selectors
and services. PostgreSQL only. `--reuse` keeps data from an earlier run.
"""

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/phc_bench")
# A throwaway key: the bench signs nothing that outlives it.
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

from bench.database import database_create_if_missing  # noqa: E402

database_create_if_missing(url=os.environ["DATABASE_URL"])
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import DatabaseError, connection, transaction  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from challenges.models import Challenge, ChallengeAttempt, LeaderboardEntry  # noqa: E402
from challenges.scoring import UNMEASURED  # noqa: E402
from challenges.selectors.leaderboards import leaderboard_for_challenge, leaderboard_rank  # noqa: E402
from challenges.services.attempts import attempt_record, leaderboard_rebuild  # noqa: E402
from challenges.services.challenges import challenge_create  # noqa: E402
from judging.verdicts import Verdict  # noqa: E402
from players.models import EndUser, Workspace  # noqa: E402
from players.services import workspace_get_or_create  # noqa: E402

WORKSPACE = "Leaderboard benchmark"
PLAYERS = 100_000
ATTEMPTS = 1_000_000
CHALLENGES = 10
SUCCESS_RATE = 0.3
STRATEGIES = ("first", "fastest", "fewest_tokens", "highest_rating")


def ensure_database() -> None:
    if connection.vendor != "postgresql":
        sys.exit(
            "This benchmark needs PostgreSQL (it fills with generate_series and measures "
            "PostgreSQL plans). Set DATABASE_URL=postgres://… ; SQLite is refused."
        )
    call_command("migrate", verbosity=0, interactive=False)


def bench_challenges(workspace: Workspace) -> list[Challenge]:
    challenges = []
    for n in range(CHALLENGES):
        strategy = STRATEGIES[n % len(STRATEGIES)]
        slug = f"bench-leaderboard-{n + 1}"
        challenge = Challenge.objects.filter(slug=slug).first()
        if challenge is None:
            rated = strategy == "highest_rating"
            challenge = challenge_create(
                workspace=workspace,
                user=None,
                slug=slug,
                name=f"Benchmark challenge {n + 1} ({strategy})",
                scoring_strategy=strategy,
                evaluator_type="llm-judge" if rated else "rules",
                success_type="contains",
                success_pattern="" if rated else "open sesame",
                max_attempts_per_hour=0,
            )
        challenges.append(challenge)
    return challenges


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _defaults_for_other_columns(model, known: set[str]) -> tuple[list[str], list[str], list]:
    """Columns a later migration may add: filled with the field's default, as the ORM would."""
    columns, placeholders, params = [], [], []
    for field in model._meta.concrete_fields:
        if field.column in known:
            continue
        if field.null and not field.has_default():
            continue
        columns.append(connection.ops.quote_name(field.column))
        placeholders.append("%s")
        params.append(field.get_db_prep_save(field.get_default(), connection))
    return columns, placeholders, params


def _drop_secondary_indexes(cursor, model) -> list[str]:
    """Drop the table's non-key indexes and return the statements that recreate them.

    Building an index once after a bulk insert is much cheaper than updating it per row;
    the whole fill is one transaction, so a failure leaves the indexes in place.
    """
    cursor.execute(
        """
        SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
        FROM pg_index AS i
        WHERE i.indrelid = %s::regclass
          AND NOT i.indisprimary
          AND NOT EXISTS (SELECT 1 FROM pg_constraint AS c WHERE c.conindid = i.indexrelid)
        """,
        [model._meta.db_table],
    )
    indexes = cursor.fetchall()
    for name, _ in indexes:
        cursor.execute(f"DROP INDEX {name}")
    return [definition for _, definition in indexes]


def _outside_references(cursor, workspace: Workspace) -> list[str]:
    """Rows of other tables that point at this workspace's attempts or end users."""
    own = [_table_name(m) for m in (EndUser, ChallengeAttempt, LeaderboardEntry)]
    cursor.execute(
        """
        SELECT c.conrelid::regclass::text, a.attname, c.confrelid::regclass::text
        FROM pg_constraint AS c
        JOIN pg_attribute AS a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
        WHERE c.contype = 'f' AND cardinality(c.conkey) = 1
          AND c.confrelid IN (%s::regclass, %s::regclass)
          AND c.conrelid::regclass::text <> ALL(%s)
        """,
        [_table_name(EndUser), _table_name(ChallengeAttempt), own],
    )
    found = []
    for table, column, target in cursor.fetchall():
        cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM {table} WHERE {connection.ops.quote_name(column)}"
            f" IN (SELECT id FROM {target} WHERE workspace_id = %s))",
            [workspace.id],
        )
        if cursor.fetchone()[0]:
            found.append(f"{table}.{column}")
    return found


def _table_name(model) -> str:
    return model._meta.db_table


def fill(workspace: Workspace, challenges: list[Challenge]) -> None:
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        # The rows are consistent by construction and nothing else points at the rows
        # deleted, so per-row foreign-key triggers can be skipped: several times faster.
        checked = _outside_references(cursor, workspace)
        if checked:
            print("  foreign keys stay checked: rows in " + ", ".join(checked) + " refer to them")
        else:
            try:
                with transaction.atomic():
                    cursor.execute("SET LOCAL session_replication_role = replica")
            except DatabaseError:
                print("  (not a superuser: foreign keys are checked row by row, slower)")
        # Everything from a previous run goes, in foreign-key order.
        cursor.execute(
            f"DELETE FROM {_table(LeaderboardEntry)} WHERE challenge_id = ANY(%s)",
            [[c.id for c in challenges]],
        )
        cursor.execute(
            f"DELETE FROM {_table(ChallengeAttempt)} WHERE workspace_id = %s", [workspace.id]
        )
        cursor.execute(f"DELETE FROM {_table(EndUser)} WHERE workspace_id = %s", [workspace.id])
        print(f"  cleared earlier data in {time.perf_counter() - started:.1f} s")

        cursor.execute("SET LOCAL synchronous_commit = off")
        cursor.execute("SELECT setseed(0.42)")

        step = time.perf_counter()
        known = {"id", "workspace_id", "external_id", "account_id", "display_name", "created_at"}
        extra_cols, extra_vals, extra_params = _defaults_for_other_columns(EndUser, known)
        cursor.execute(
            f"""
            INSERT INTO {_table(EndUser)}
                (id, workspace_id, external_id, account_id, display_name, created_at
                 {"".join(", " + c for c in extra_cols)})
            SELECT gen_random_uuid(), %s, 'bench-player-' || g, NULL, 'Player ' || g,
                   now() - interval '60 days' {"".join(", " + v for v in extra_vals)}
            FROM generate_series(1, %s) AS g
            """,
            [workspace.id, *extra_params, PLAYERS],
        )
        print(f"  {PLAYERS:,} end users in {time.perf_counter() - step:.1f} s")

        cursor.execute(
            f"""
            CREATE TEMP TABLE bench_player ON COMMIT DROP AS
            SELECT row_number() OVER (ORDER BY id) AS n, id
            FROM {_table(EndUser)} WHERE workspace_id = %s
            """,
            [workspace.id],
        )
        cursor.execute("ALTER TABLE bench_player ADD PRIMARY KEY (n)")
        cursor.execute(
            "CREATE TEMP TABLE bench_challenge (n int PRIMARY KEY, id uuid, strategy text) "
            "ON COMMIT DROP"
        )
        cursor.executemany(
            "INSERT INTO bench_challenge VALUES (%s, %s, %s)",
            [(n, c.id, c.scoring_strategy) for n, c in enumerate(challenges)],
        )

        step = time.perf_counter()
        known = {
            "id", "workspace_id", "challenge_id", "end_user_id", "account_id",
            "workflow_run_id", "succeeded", "score", "judge_rating", "judge_feedback",
            "judge_output_raw", "tokens_total", "elapsed_ms", "prompt", "response",
            "prompt_sha256", "prompt_length", "response_sha256", "response_length",
            "source", "idempotency_key", "created_at",
        }  # fmt: skip
        extra_cols, extra_vals, extra_params = _defaults_for_other_columns(ChallengeAttempt, known)
        rebuild = _drop_secondary_indexes(cursor, ChallengeAttempt)
        # A successful attempt's score is its standing's score (challenges/scoring.py).
        cursor.execute(
            f"""
            INSERT INTO {_table(ChallengeAttempt)}
                (id, workspace_id, challenge_id, end_user_id, account_id, workflow_run_id,
                 succeeded, score, judge_rating, judge_feedback, judge_output_raw,
                 tokens_total, elapsed_ms, prompt, response, prompt_sha256, prompt_length,
                 response_sha256, response_length, source, idempotency_key, created_at
                 {"".join(", " + c for c in extra_cols)})
            SELECT gen_random_uuid(), %s, c.id, p.id, NULL, '',
                   s.succeeded,
                   CASE WHEN NOT s.succeeded THEN NULL
                        WHEN c.strategy = 'first' THEN 1.0
                        WHEN c.strategy = 'fastest' THEN s.elapsed_ms
                        WHEN c.strategy = 'fewest_tokens' THEN s.tokens_total
                        ELSE s.rating END,
                   CASE WHEN c.strategy = 'highest_rating' THEN s.rating END,
                   '', NULL, s.tokens_total, s.elapsed_ms,
                   CASE WHEN s.succeeded THEN 'benchmark prompt' ELSE '' END,
                   CASE WHEN s.succeeded THEN 'benchmark response' ELSE '' END,
                   md5(s.g::text) || md5(s.g::text), 16, md5(s.g::text) || md5(s.g::text), 18,
                   'web', NULL, s.created_at
                   {"".join(", " + v for v in extra_vals)}
            FROM (
                SELECT g,
                       1 + floor(random() * %s)::int AS player_n,
                       floor(random() * %s)::int AS challenge_n,
                       random() < %s AS succeeded,
                       20 + floor(random() * 2000)::int AS tokens_total,
                       150 + floor(random() * 30000)::int AS elapsed_ms,
                       floor(random() * 11)::int AS rating,
                       now() - random() * interval '30 days' AS created_at
                FROM generate_series(1, %s) AS g
            ) AS s
            JOIN bench_player AS p ON p.n = s.player_n
            JOIN bench_challenge AS c ON c.n = s.challenge_n
            """,
            [
                workspace.id,
                *extra_params,
                PLAYERS,
                len(challenges),
                SUCCESS_RATE,
                ATTEMPTS,
            ],
        )
        print(f"  {ATTEMPTS:,} attempts in {time.perf_counter() - step:.1f} s")
        step = time.perf_counter()
        for statement in rebuild:
            cursor.execute(statement)
        print(f"  {len(rebuild)} attempt indexes rebuilt in {time.perf_counter() - step:.1f} s")

        step = time.perf_counter()
        # attempt_record keeps, per player, the success with the lowest rank_value and,
        # among equals, the earliest; first_succeeded_at is the earliest success.
        cursor.execute(
            f"""
            INSERT INTO {_table(LeaderboardEntry)}
                (challenge_id, end_user_id, attempt_id, rank_value, achieved_at, score,
                 judge_rating, tokens_total, elapsed_ms, first_succeeded_at)
            SELECT DISTINCT ON (ranked.challenge_id, ranked.end_user_id)
                   challenge_id, end_user_id, id, rank_value, created_at, score,
                   judge_rating, tokens_total, elapsed_ms, first_succeeded_at
            FROM (
                SELECT a.*,
                       CASE c.strategy
                           WHEN 'first' THEN 0.0
                           WHEN 'fastest' THEN COALESCE(a.elapsed_ms::float, %(unmeasured)s)
                           WHEN 'fewest_tokens'
                               THEN COALESCE(a.tokens_total::float, %(unmeasured)s)
                           ELSE COALESCE(-a.judge_rating::float, %(unmeasured)s)
                       END AS rank_value,
                       min(a.created_at) OVER (PARTITION BY a.challenge_id, a.end_user_id)
                           AS first_succeeded_at
                FROM {_table(ChallengeAttempt)} AS a
                JOIN bench_challenge AS c ON c.id = a.challenge_id
                WHERE a.succeeded
            ) AS ranked
            ORDER BY ranked.challenge_id, ranked.end_user_id, rank_value, created_at, id
            """,
            {"unmeasured": UNMEASURED},
        )
        print(f"  {cursor.rowcount:,} leaderboard entries in {time.perf_counter() - step:.1f} s")

    step = time.perf_counter()
    with connection.cursor() as cursor:
        for model in (EndUser, ChallengeAttempt, LeaderboardEntry):
            cursor.execute(f"VACUUM ANALYZE {_table(model)}")
    print(f"  VACUUM ANALYZE in {time.perf_counter() - step:.1f} s")
    print(f"filled in {time.perf_counter() - started:.1f} s")


def check_fill_matches_service(challenges: list[Challenge]) -> None:
    """Rebuild one board per strategy with the service, compare, then roll back."""
    for strategy in STRATEGIES:
        challenge = next(c for c in challenges if c.scoring_strategy == strategy)
        columns = ("end_user_id", "attempt_id", "rank_value", "achieved_at", "first_succeeded_at")
        board = LeaderboardEntry.objects.filter(challenge=challenge)
        filled = set(board.values_list(*columns))
        with transaction.atomic():
            leaderboard_rebuild(challenge=challenge)
            rebuilt = set(board.values_list(*columns))
            transaction.set_rollback(True)
        verdict = "matches" if filled == rebuilt else "DIFFERS FROM"
        print(f"  {strategy:<15} fill {verdict} leaderboard_rebuild ({len(filled):,} entries)")
        if filled != rebuilt:
            sys.exit("The SQL fill does not reproduce the service's leaderboard.")


def _ms(samples: list[float]) -> str:
    median = statistics.median(samples) * 1000
    p99 = statistics.quantiles(samples, n=100, method="inclusive")[98] * 1000
    return f"median {median:6.2f} ms  p99 {p99:6.2f} ms"


def measure(label: str, calls: list[Callable[[], object]]) -> None:
    for call in calls[:20]:  # warm the connection, caches and plans
        call()
    durations = []
    for call in calls:
        began = time.perf_counter()
        call()
        durations.append(time.perf_counter() - began)
    with CaptureQueriesContext(connection) as captured:
        for call in calls[:50]:
            call()
    per_call = len(captured.captured_queries) / min(len(calls), 50)
    print(f"{label:<44} {_ms(durations)}  {per_call:.1f} queries/call  ({len(calls)} calls)")


def _last_sql(call: Callable[[], object]) -> str:
    with CaptureQueriesContext(connection) as captured:
        call()
    return captured.captured_queries[-1]["sql"]


def _run_sql(query: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(query)
        cursor.fetchall()


def _run_sql_params(query: str, params: list) -> None:
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        cursor.fetchall()


def explain(label: str, call: Callable[[], object]) -> None:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + _last_sql(call))
        plan = "\n".join("    " + row[0] for row in cursor.fetchall())
    print(f"EXPLAIN {label}:\n{plan}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reuse", action="store_true", help="keep data from an earlier run")
    parser.add_argument("--reads", type=int, default=500, help="reads per measurement")
    parser.add_argument("--writes", type=int, default=200, help="attempt_record calls")
    options = parser.parse_args()

    ensure_database()
    workspace = workspace_get_or_create(name=WORKSPACE)
    challenges = bench_challenges(workspace)
    present = ChallengeAttempt.objects.filter(workspace=workspace).count()
    if options.reuse and present >= ATTEMPTS:
        print(f"reusing {present:,} attempts already in the database")
    else:
        fill(workspace, challenges)
        check_fill_matches_service(challenges)

    rng = random.Random(7)
    entries = LeaderboardEntry.objects.filter(challenge__in=challenges)
    print(
        f"data: {EndUser.objects.filter(workspace=workspace).count():,} players, "
        f"{ChallengeAttempt.objects.filter(workspace=workspace).count():,} attempts, "
        f"{entries.count():,} leaderboard entries, {len(challenges)} challenges"
    )
    print()

    for limit in (10, 100):
        calls = [
            partial(
                leaderboard_for_challenge,
                challenge=challenges[n % len(challenges)],
                limit=limit,
            )
            for n in range(options.reads)
        ]
        measure(f"leaderboard_for_challenge(limit={limit})", calls)
        # The same SQL without the ORM around it: what the database itself costs.
        measure(
            f"  its SQL alone, raw cursor (limit={limit})",
            [partial(_run_sql, _last_sql(call)) for call in calls],
        )

    picks = list(entries.order_by("?").values_list("challenge_id", "end_user_id")[: options.reads])
    by_id = {c.id: c for c in challenges}
    calls = [
        partial(leaderboard_rank, challenge=by_id[challenge_id], end_user=EndUser(id=user_id))
        for challenge_id, user_id in picks
    ]
    measure("leaderboard_rank(random player)", calls)
    # For comparison: the same rank from one row-value comparison, which the
    # (challenge, rank_value, achieved_at, id) index answers as a range.
    rank_sql = (
        f"SELECT count(*) + 1 FROM {_table(LeaderboardEntry)} AS e, {_table(LeaderboardEntry)}"
        " AS mine WHERE mine.challenge_id = %s AND mine.end_user_id = %s"
        " AND e.challenge_id = mine.challenge_id"
        " AND (e.rank_value, e.achieved_at, e.id) < (mine.rank_value, mine.achieved_at, mine.id)"
    )
    measure(
        "  row-comparison rank, raw SQL (alternative)",
        [partial(_run_sql_params, rank_sql, [c, u]) for c, u in picks],
    )

    players = list(EndUser.objects.filter(workspace=workspace).order_by("?")[: options.writes])

    def record(n: int) -> Callable[[], object]:
        challenge = challenges[n % len(challenges)]
        player = players[n]
        passed = rng.random() < 0.5
        rating = rng.randint(0, 10) if challenge.scoring_strategy == "highest_rating" else None
        verdict = Verdict(passed=passed, rating=rating, feedback="benchmark")
        return lambda: attempt_record(
            challenge=challenge,
            end_user=player,
            verdict=verdict,
            prompt="benchmark prompt",
            response="benchmark response",
            tokens_total=rng.randint(20, 2000),
            elapsed_ms=rng.randint(150, 30000),
        )

    measure("attempt_record(one more attempt)", [record(n) for n in range(options.writes)])
    print()
    board = challenges[1]
    explain(
        "leaderboard_for_challenge(limit=10)",
        partial(leaderboard_for_challenge, challenge=board, limit=10),
    )
    explain(
        "leaderboard_for_challenge(limit=100)",
        partial(leaderboard_for_challenge, challenge=board, limit=100),
    )
    middle = entries.filter(challenge=board).order_by("rank_value", "achieved_at", "id")
    middle_user = middle.values_list("end_user_id", flat=True)[middle.count() // 2]
    explain(
        "leaderboard_rank(player in the middle of the board), its count query",
        partial(leaderboard_rank, challenge=board, end_user=EndUser(id=middle_user)),
    )


if __name__ == "__main__":
    main()
