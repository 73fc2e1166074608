"""Throughput benchmark: recorded attempts/s through the bridge and board reads/s, with wrk.

    .venv/bin/python bench/throughput.py                       # 3 rounds of 20 s, 32 connections
    .venv/bin/python bench/throughput.py --seconds 3 --rounds 1 # a quick check that it works
    .venv/bin/python bench/throughput.py --checkout /work/wt/before   # serve an older tree

Serves `config.asgi:application` of the checkout with uvicorn (--workers, uvloop,
httptools, no access log, DEBUG off, plain HTTP on 127.0.0.1) on PostgreSQL (DATABASE_URL,
default database phc_tp_bench, dropped, created and migrated on every start) and Redis
(REDIS_URL, default db 9). The checkout's own Python prepares a workspace, a public rules
challenge (max_attempts_per_hour raised so the per-player limit is checked but never hit)
and a bridge key; BRIDGE_RATE_LIMIT is raised for the server the same way. A warm-up then
makes one call per player (1,000 players, one in three a success, so the board has rows).

Each round runs three scenarios with wrk and the Lua scripts in bench/wrk/:
  attempts  POST /bridge/dify/challenge-evaluator (rules mode), a new workflow_run_id
            per call, one of 1,000 players, one call in three a success;
  reads     GET /web/api/challenges/<id>/leaderboard?limit=10, plain 200 reads
            (--conditional-reads sends If-None-Match and counts 304s apart);
  mixed     both at once, two wrk processes with --connections each (32 + 32 by default;
            --mixed-connections 16 gives 16 + 16).
Per scenario it prints requests/s, p50/p99, non-2xx answers, the server's CPU per request
(utime + stime of the uvicorn processes from /proc; in the mixed run over both kinds), the
CPU of PostgreSQL, Redis and wrk over the run, and after every run with attempts whether the
attempts in the database match the 2xx answers. A summary table closes (ranges over rounds).

wrk runs one thread per connection, so the scripts time each request themselves (wrk's own
percentiles include invented samples); after --seconds the scripts stop sending and wait
up to --grace seconds for the answers in flight, so every answered call can be counted.
"""

import argparse
import json
import os
import re
import resource
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path

import environ
import psycopg
import redis
from psycopg import sql
from psycopg.conninfo import make_conninfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.serving import command_line, process_tree, processes, stop, uvicorn_start  # noqa: E402

LUA = ROOT / "bench" / "wrk"
PLAYERS = 1000
CELERY_QUEUE = "phc-throughput-bench"

# Run by the checkout's own Python (manage.py shell), so an older tree prepares its data
# with its own code. Prints one line the bench reads back.
PREPARE = """
import json
from challenges.services.bridge_keys import bridge_key_create
from challenges.services.challenges import challenge_create
from players.services import workspace_get_or_create

workspace = workspace_get_or_create(name="Throughput benchmark")
challenge = challenge_create(
    workspace=workspace,
    user=None,
    name="Throughput bench",
    slug="bench-throughput",
    success_type="contains",
    success_pattern="open sesame",
    max_attempts_per_hour=100000,
)
_, key = bridge_key_create(workspace=workspace, name="throughput bench")
print("prepared " + json.dumps({"challenge_id": str(challenge.id), "key": key}))
"""


# --- Database and server --------------------------------------------------------------


def database_recreate(url: str) -> None:
    config = environ.Env.db_url_config(url)
    if config["ENGINE"] != "django.db.backends.postgresql":
        sys.exit("This benchmark needs PostgreSQL: set DATABASE_URL=postgres://…")
    if "bench" not in config["NAME"]:
        sys.exit(f"Refusing to drop {config['NAME']!r}: the database name must contain 'bench'.")
    with psycopg.connect(connection_info(url, dbname="postgres"), autocommit=True) as admin:
        name = sql.Identifier(config["NAME"])
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(name))


def connection_info(url: str, dbname: str | None = None) -> str:
    config = environ.Env.db_url_config(url)
    params = {
        "host": config.get("HOST"),
        "port": config.get("PORT"),
        "user": config.get("USER"),
        "password": config.get("PASSWORD"),
        "dbname": dbname or config["NAME"],
    }
    return make_conninfo(**{k: str(v) for k, v in params.items() if v})


def count_rows(url: str, query: str, *params) -> int:
    with psycopg.connect(connection_info(url)) as db:
        return db.execute(query, params).fetchone()[0]


def attempts_recorded(url: str, challenge_id: str) -> int:
    query = "SELECT count(*) FROM challenges_challengeattempt WHERE challenge_id = %s"
    return count_rows(url, query, challenge_id)


def server_environment(args: argparse.Namespace) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "false",
        # A throwaway key shared by the preparation and the server (bridge keys are
        # encrypted with a key derived from it); the bench signs nothing that outlives it.
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-" + secrets.token_hex(16)),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        # Plain HTTP on loopback: no redirect to HTTPS, no HSTS, cookies without Secure.
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_HSTS_SECONDS": "0",
        "SECURE_COOKIES": "false",
        "BRIDGE_RATE_LIMIT": os.environ.get("BRIDGE_RATE_LIMIT", "100000000/m"),
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
        "DB_POOL_SIZE": os.environ.get("DB_POOL_SIZE", "8"),
        # Tasks queued on the way (first blood's event) go to a queue no worker reads and
        # that the bench empties at the end.
        "CELERY_QUEUE": CELERY_QUEUE,
        # Whitenoise warns once per worker that collectstatic never ran: the API needs none.
        "PYTHONWARNINGS": "ignore:No directory at:UserWarning",
    }


def checkout_python(checkout: Path) -> str:
    own = checkout / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def manage(args: argparse.Namespace, env: dict[str, str], *command: str) -> str:
    result = subprocess.run(
        [checkout_python(args.checkout), "manage.py", *command],
        cwd=args.checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode:
        sys.exit(f"manage.py {command[0]} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def prepare(args: argparse.Namespace, env: dict[str, str]) -> tuple[str, str]:
    """Fresh database, migrated; returns (challenge id, bridge key)."""
    database_recreate(args.database_url)
    manage(args, env, "migrate", "--no-input", "--verbosity=0")
    output = manage(args, env, "shell", "--no-imports", "-c", PREPARE)
    line = next(line for line in output.splitlines() if line.startswith("prepared "))
    prepared = json.loads(line.removeprefix("prepared "))
    return prepared["challenge_id"], prepared["key"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(args: argparse.Namespace, env: dict[str, str], port: int) -> subprocess.Popen:
    return uvicorn_start(
        port=port,
        workers=args.workers,
        env=env,
        checkout=args.checkout,
        python=checkout_python(args.checkout),
    )


def warm_up(port: int, key: str, challenge_id: str, run_prefix: str) -> dict[int, int]:
    """One call per player (player i succeeds when i % 3 == 0), then a few board reads."""

    def call(index: int) -> int:
        body = {
            "challenge_id": challenge_id,
            "output": "Fine, fine: open sesame." if index % 3 == 0 else "No way.",
            "user": f"bench-player-{index}",
            "workflow_run_id": f"{run_prefix}-warm-up-{index}",
            "tokens_total": 40 + index % 50,
            "elapsed_ms": 300 + index % 700,
        }
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/bridge/dify/challenge-evaluator",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        return fetch(request)

    def read(_: int) -> int:
        return fetch(board_url(port, challenge_id))

    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(call, range(PLAYERS))) + list(pool.map(read, range(100)))
    return {status: statuses.count(status) for status in sorted(set(statuses))}


def fetch(request: urllib.request.Request | str) -> int:
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            answer.read()
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def board_url(port: int, challenge_id: str) -> str:
    return f"http://127.0.0.1:{port}/web/api/challenges/{challenge_id}/leaderboard?limit=10"


# --- CPU from /proc -------------------------------------------------------------------


@dataclass
class CpuSample:
    app: float  # uvicorn master and its workers (and nginx, in front of several)
    postgres: float  # every PostgreSQL process (the server is shared)
    bench_backends: float  # PostgreSQL backends connected to the bench database
    redis: float
    wrk: float  # waited-for children of this process: the wrk runs

    def __sub__(self, other: "CpuSample") -> "CpuSample":
        return CpuSample(
            **{
                field.name: getattr(self, field.name) - getattr(other, field.name)
                for field in fields(self)
            }
        )


def cpu_sample(server_pids: list[int], database: str) -> CpuSample:
    table = processes()
    tree = process_tree(table, server_pids)
    postgres = [pid for pid, (name, _, _) in table.items() if name == "postgres"]
    backend = re.compile(rf"^postgres: .*\b{re.escape(database)}\b")
    return CpuSample(
        app=sum(table[pid][2] for pid in tree if pid in table),
        postgres=sum(table[pid][2] for pid in postgres),
        bench_backends=sum(table[pid][2] for pid in postgres if backend.match(command_line(pid))),
        redis=sum(cpu for name, _, cpu in table.values() if name == "redis-server"),
        wrk=sum(
            getattr(resource.getrusage(resource.RUSAGE_CHILDREN), field)
            for field in ("ru_utime", "ru_stime")
        ),
    )


# --- wrk ------------------------------------------------------------------------------


@dataclass
class WrkResult:
    kind: str
    connections: int
    values: dict[str, float]

    @property
    def rate(self) -> float:
        return self.values["answered"] / self.values["seconds"] if self.values["seconds"] else 0.0

    @property
    def non_2xx(self) -> int:
        return int(self.values["answered"] - self.values["ok"])


def wrk_start(
    kind: str, args: argparse.Namespace, port: int, script_args: list[str], connections: int
) -> tuple[str, int, subprocess.Popen]:
    command = [
        args.wrk,
        f"--threads={connections}",
        f"--connections={connections}",
        f"--duration={args.seconds + args.grace}s",
        "--timeout=60s",
        f"--script={LUA / (kind + '.lua')}",
        f"http://127.0.0.1:{port}",
        "--",
        *script_args,
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return kind, connections, process


def wrk_finish(kind: str, connections: int, process: subprocess.Popen) -> WrkResult:
    output, _ = process.communicate()
    line = next((line for line in output.splitlines() if line.startswith("wrk-result ")), None)
    if process.returncode or line is None:
        sys.exit(f"wrk ({kind}) failed:\n{output}")
    values = dict(pair.split("=") for pair in line.split()[1:])
    return WrkResult(kind, connections, {name: float(value) for name, value in values.items()})


# --- Scenarios ------------------------------------------------------------------------


@dataclass
class Bench:
    args: argparse.Namespace
    port: int
    server_pids: list[int]
    challenge_id: str
    key: str
    database: str

    def attempts(self, connections: int):
        run_prefix = secrets.token_hex(6)  # a new one per wrk run: workflow_run_ids stay unique
        script_args = [self.key, self.challenge_id, run_prefix, str(self.args.seconds)]
        return wrk_start("attempts", self.args, self.port, script_args, connections)

    def reads(self, connections: int):
        script_args = [self.challenge_id, str(self.args.seconds)]
        if self.args.conditional_reads:
            script_args.append("conditional")
        return wrk_start("reads", self.args, self.port, script_args, connections)

    def run(self, scenario: str) -> tuple[list[WrkResult], CpuSample, str]:
        connections, mixed = self.args.connections, self.args.mixed_connections
        starts = {
            "attempts": lambda: [self.attempts(connections)],
            "reads": lambda: [self.reads(connections)],
            "mixed": lambda: [self.attempts(mixed), self.reads(mixed)],
        }[scenario]
        attempts_before = attempts_recorded(self.args.database_url, self.challenge_id)
        before = cpu_sample(self.server_pids, self.database)
        results = [wrk_finish(*started) for started in starts()]
        cpu = cpu_sample(self.server_pids, self.database) - before
        check = ""
        for result in results:
            if result.kind == "attempts":
                check = self.recorded_check(result, attempts_before)
        return results, cpu, check

    def recorded_check(self, result: WrkResult, attempts_before: int) -> str:
        answered_2xx, lost = int(result.values["ok"]), int(result.values["in_flight"])
        if lost:
            time.sleep(2)  # the server may still be finishing what wrk stopped waiting for
        recorded = attempts_recorded(self.args.database_url, self.challenge_id) - attempts_before
        if recorded == answered_2xx:
            return f"every call recorded: {recorded:,} attempts in the database = 2xx answers"
        if lost and answered_2xx <= recorded <= answered_2xx + lost:
            return (
                f"{recorded:,} attempts in the database for {answered_2xx:,} 2xx answers and "
                f"{lost} calls still unanswered after the grace period (raise --grace)"
            )
        return f"MISMATCH: {recorded:,} attempts in the database, {answered_2xx:,} 2xx answers"


def report(round_number: int, scenario: str, results, cpu: CpuSample, check: str) -> None:
    answered = sum(result.values["answered"] for result in results)
    seconds = max(result.values["seconds"] for result in results)
    print(f"round {round_number} · {scenario}")
    for result in results:
        values = result.values
        not_modified = f" (304: {int(values['not_modified']):,})" if values["not_modified"] else ""
        errors = ", ".join(
            f"{name.replace('_', ' ')} {int(values[name])}"
            for name in ("connect_errors", "read_errors", "write_errors", "timeouts")
            if values[name]
        )
        socket_errors = f" · wrk {errors}" if errors else ""
        print(
            f"  {result.kind:<8} {result.connections:>3} conn  {result.rate:8,.0f} req/s  "
            f"p50 {values['p50_ms']:7.1f} ms  p99 {values['p99_ms']:7.1f} ms  "
            f"max {values['max_ms']:7.1f} ms  non-2xx {result.non_2xx}{not_modified}  "
            f"({int(values['answered']):,} in {values['seconds']:.1f} s)"
            f"{socket_errors}"
        )
    per_request = cpu.app * 1000 / answered if answered else 0.0
    print(
        f"  CPU: app {per_request:.2f} ms/request ({cpu.app:.1f} s, "
        f"{cpu.app / seconds:.2f} cores)"
        f" · PostgreSQL {cpu.postgres:.1f} s ({cpu.postgres / seconds:.2f} cores; "
        f"bench database backends {cpu.bench_backends:.1f} s)"
        f" · Redis {cpu.redis:.1f} s ({cpu.redis / seconds:.2f} cores)"
        f" · wrk {cpu.wrk:.1f} s ({cpu.wrk / seconds:.2f} cores)"
    )
    if check:
        print(f"  {check}")


def summary(
    rows: dict[tuple[str, str], list[tuple[WrkResult, float]]], rounds: int, label: str = ""
) -> None:
    def spread(values: list[float], form: str) -> str:
        low, high = form.format(min(values)), form.format(max(values))
        text = low if low == high else f"{low}–{high}"
        if rounds > 2:
            text += f" (median {form.format(statistics.median(values))})"
        return text

    print(f"\nsummary{' · ' + label if label else ''} over {rounds} round(s): ranges (low–high)")
    print("| scenario | connections | requests/s | p50 ms | p99 ms | non-2xx | app CPU ms/req |")
    print("|---|---|---|---|---|---|---|")
    for (scenario, kind), entries in rows.items():
        results = [result for result, _ in entries]
        print(
            f"| {kind} ({'idle' if scenario == kind else scenario}) | {results[0].connections} "
            f"| {spread([result.rate for result in results], '{:,.0f}')} "
            f"| {spread([result.values['p50_ms'] for result in results], '{:.1f}')} "
            f"| {spread([result.values['p99_ms'] for result in results], '{:.1f}')} "
            f"| {sum(result.non_2xx for result in results)} "
            f"| {spread([per_request for _, per_request in entries], '{:.2f}')} |"
        )
    if any(scenario == "mixed" for scenario, _ in rows):
        print("(mixed: the app CPU per request counts attempts and reads together)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the tree whose app is served")
    parser.add_argument("--seconds", type=int, default=20, help="length of each run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument(
        "--mixed-connections",
        type=int,
        help="connections of each of the two wrk processes in the mixed run (default: same)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument(
        "--grace", type=int, default=5, help="seconds wrk waits for answers in flight"
    )
    parser.add_argument(
        "--scenarios", default="attempts,reads,mixed", help="comma-separated, in this order"
    )
    parser.add_argument(
        "--conditional-reads",
        action="store_true",
        help="reads send If-None-Match with the last ETag (304s counted apart)",
    )
    parser.add_argument("--wrk", default=shutil.which("wrk") or "/usr/bin/wrk")
    parser.add_argument(
        "--through-nginx",
        action="store_true",
        help="serve through nginx (deploy/nginx/) in front of --processes uvicorn processes",
    )
    parser.add_argument(
        "--processes",
        default="1,3",
        help="with --through-nginx: the process counts measured one after the other",
    )
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args = parser.parse_args()
    args.processes = [int(count) for count in args.processes.split(",")]
    args.checkout = args.checkout.resolve()
    args.mixed_connections = args.mixed_connections or args.connections
    args.database_url = os.environ.get(
        "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/phc_tp_bench"
    )
    args.redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9")
    scenarios = args.scenario_list = [
        name.strip() for name in args.scenarios.split(",") if name.strip()
    ]
    if unknown := set(scenarios) - {"attempts", "reads", "mixed"}:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    if not (args.checkout / "manage.py").exists():
        parser.error(f"{args.checkout} has no manage.py")

    commit = subprocess.run(
        ["git", "-C", str(args.checkout), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"checkout {args.checkout} ({commit or 'not a git tree'})")
    env = server_environment(args)
    challenge_id, key = prepare(args, env)
    if not args.through_nginx:
        port = free_port()
        server = serve(args, env, port)
        try:
            label = f"uvicorn --workers {args.workers} on :{port}"
            measure(args, port, [server.pid], challenge_id, key, label)
        finally:
            stop(server)
            redis.Redis.from_url(args.redis_url).delete(CELERY_QUEUE)
        return
    for count in args.processes:
        with behind_nginx(args, env, count) as (port, pids):
            label = f"nginx :{port} in front of {count} uvicorn process(es) of 1 worker each"
            measure(args, port, pids, challenge_id, key, label)
    redis.Redis.from_url(args.redis_url).delete(CELERY_QUEUE)


def measure(args, port: int, pids: list[int], challenge_id: str, key: str, label: str) -> None:
    database = environ.Env.db_url_config(args.database_url)["NAME"]
    statuses = warm_up(port, key, challenge_id, secrets.token_hex(6))
    board_rows = count_rows(
        args.database_url,
        "SELECT count(*) FROM challenges_leaderboardentry WHERE challenge_id = %s",
        challenge_id,
    )
    print(
        f"{label}; {os.cpu_count()} CPUs; "
        f"{args.rounds} round(s) of {args.seconds} s (+ up to {args.grace} s grace); "
        f"{args.connections} connections, mixed {args.mixed_connections} + "
        f"{args.mixed_connections}; "
        f"reads {'conditional' if args.conditional_reads else 'plain 200'}"
    )
    print(
        f"warm-up (one call per player, then 100 reads): statuses {statuses}; "
        f"board rows {board_rows}"
    )
    if set(statuses) != {200}:
        sys.exit("The warm-up got answers other than 200: see the server's log above.")
    bench = Bench(args, port, pids, challenge_id, key, database)
    rows: dict[tuple[str, str], list[tuple[WrkResult, float]]] = {}
    for round_number in range(1, args.rounds + 1):
        for scenario in args.scenario_list:
            results, cpu, check = bench.run(scenario)
            report(round_number, scenario, results, cpu, check)
            answered = sum(result.values["answered"] for result in results)
            for result in results:
                per_request = cpu.app * 1000 / answered if answered else 0.0
                rows.setdefault((scenario, result.kind), []).append((result, per_request))
    summary(rows, args.rounds, label)


@contextmanager
def behind_nginx(args, env: dict[str, str], count: int):
    """`count` uvicorn processes (one worker each, as `make cluster` runs them) behind an
    nginx configured from deploy/nginx/, on free ports; yields (nginx's port, the pids of
    the processes and of nginx's master)."""
    from deploy.cluster import render_files

    env = {**env, "TRUSTED_PROXIES": "127.0.0.1"}
    ports = [free_port() for _ in range(count)]
    servers = []
    state = Path(tempfile.mkdtemp(prefix="phc-bench-nginx-"))
    nginx = [args.nginx, "-p", str(state / "nginx"), "-c", str(state / "nginx/nginx.conf")]
    try:
        for port in ports:
            servers.append(
                uvicorn_start(
                    port=port,
                    workers=1,
                    env=env,
                    checkout=args.checkout,
                    python=checkout_python(args.checkout),
                )
            )
        port = free_port()
        upstream = "\n".join(
            f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;" for p in ports
        )
        mapping = {
            "PHC_STATE": str(state),
            "PHC_LISTEN": f"127.0.0.1:{port}",
            "PHC_ACCESS_LOG": "off",
            "PHC_UPSTREAM_SERVERS": upstream,
        }
        render_files(mapping, state)
        for folder in ("logs", "nginx/body", "nginx/proxy", "nginx/fastcgi", "nginx/uwsgi"):
            (state / folder).mkdir(parents=True, exist_ok=True)
        (state / "nginx" / "scgi").mkdir(exist_ok=True)
        subprocess.run(nginx, check=True)
        master = int((state / "nginx" / "nginx.pid").read_text())
        yield port, [server.pid for server in servers] + [master]
    finally:
        if (state / "nginx" / "nginx.pid").exists():
            subprocess.run([*nginx, "-s", "quit"], check=False)
        for server in servers:
            stop(server)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
