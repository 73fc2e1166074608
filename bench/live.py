"""Live leaderboard benchmark: one push to 1,000 open board sockets, three rounds.

    .venv/bin/python bench/live.py                      # 1,000 clients, 3 rounds, 2 workers
    .venv/bin/python bench/live.py --clients 500 --rounds 5 --workers 4

Serves the app with uvicorn (several worker processes) on PostgreSQL (DATABASE_URL,
default database phc_live_bench, created and migrated when missing) and the Redis channel
layer (REDIS_URL, default db 7, prefix phc-live-bench). Each round opens the clients at
once on a fresh challenge's board, records a win in this process (the push goes out after
the commit, as on the site), times the push to the last client, then closes every socket
at once and reads the group's size from Redis: before the round, with everyone joined, and
after everyone left (it must come back to where it was). With everyone connected it also
reads the resident memory (RSS, from /proc) of each uvicorn worker process.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/phc_live_bench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")
os.environ.setdefault("CHANNELS_PREFIX", "phc-live-bench")
# A throwaway key: the bench signs nothing that outlives it.
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

from bench.database import database_create_if_missing  # noqa: E402
from bench.serving import site_environment, uvicorn_start  # noqa: E402
from bench.serving import stop as stop_server  # noqa: E402

database_create_if_missing(url=os.environ["DATABASE_URL"])
django.setup()

import redis  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

from challenges.models import Challenge  # noqa: E402
from challenges.services.attempts import attempt_record  # noqa: E402
from challenges.services.challenges import challenge_create  # noqa: E402
from judging.verdicts import Verdict  # noqa: E402
from players.services import end_user_for_external_id, workspace_get_or_create  # noqa: E402

WORKSPACE = "Live benchmark"


def serve(port: int, workers: int) -> subprocess.Popen:
    return uvicorn_start(
        port=port,
        workers=workers,
        env=site_environment(),
        extra=("--timeout-graceful-shutdown=5", "--backlog=4096"),
        wait_seconds=None,  # run() waits for it on its own loop
    )


def stop(server: subprocess.Popen) -> None:
    stop_server(server, timeout=20)


def fresh_challenge() -> Challenge:
    workspace = workspace_get_or_create(name=WORKSPACE)
    return challenge_create(
        workspace=workspace,
        user=None,
        name=f"Live bench {uuid.uuid4().hex[:8]}",
        success_type="contains",
        success_pattern="open sesame",
        max_attempts_per_hour=0,
    )


def record_a_win(challenge: Challenge, player: str) -> None:
    try:
        attempt_record(
            challenge=challenge,
            end_user=end_user_for_external_id(workspace=challenge.workspace, external_id=player),
            verdict=Verdict(True, "ok"),
        )
    finally:
        connection.close()


def group_size(challenge: Challenge) -> int:
    prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"]
    with redis.Redis.from_url(settings.REDIS_URL) as client:
        return client.zcard(f"{prefix}:group:leaderboard.challenge.{challenge.id}")


def workers_rss_mib(server_pid: int) -> list[float]:
    """Resident memory of each uvicorn worker (the server's child processes), in MiB."""
    sizes = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" not in command:  # multiprocessing's resource tracker, not a worker
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("PPid", "").strip() == str(server_pid) and "VmRSS" in fields:
            sizes.append(int(fields["VmRSS"].split()[0]) / 1024)
    return sorted(sizes)


async def wait_for_server(url: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            async with connect(url, origin="http://127.0.0.1", open_timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                sys.exit("uvicorn did not start within 60 s")
            await asyncio.sleep(0.3)


async def open_board(url: str):
    board = await connect(url, origin="http://127.0.0.1", open_timeout=60, ping_interval=None)
    await asyncio.wait_for(board.recv(), 60)  # the standings sent on connect
    return board


async def until_received(board) -> float:
    frame = json.loads(await asyncio.wait_for(board.recv(), 60))
    assert frame["type"] == "leaderboard", frame
    return time.monotonic()


async def group_settles(challenge: Challenge, size: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    current = await asyncio.to_thread(group_size, challenge)
    while current != size and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        current = await asyncio.to_thread(group_size, challenge)
    return current


async def one_round(
    url: str, challenge: Challenge, clients: int, number: int, server_pid: int
) -> None:
    before = await asyncio.to_thread(group_size, challenge)
    started = time.monotonic()
    boards = await asyncio.gather(*[open_board(url) for _ in range(clients)])
    connected_s = time.monotonic() - started
    joined = await group_settles(challenge, before + clients, 10)
    rss = workers_rss_mib(server_pid)

    receivers = [asyncio.ensure_future(until_received(board)) for board in boards]
    pushed_at = time.monotonic()
    await asyncio.to_thread(record_a_win, challenge, f"round-{number}")
    arrivals = [(arrived - pushed_at) * 1000 for arrived in await asyncio.gather(*receivers)]

    await asyncio.gather(*[board.close() for board in boards])
    after = await group_settles(challenge, before, 30)
    print(
        f"round {number}: {clients} clients connected in {connected_s:.2f} s; "
        f"push p50 {statistics.median(arrivals):.0f} ms, last client {max(arrivals):.0f} ms; "
        f"group {before} before, {joined} joined, {after} after all left; "
        f"worker RSS with {clients} connected {' + '.join(f'{m:.0f}' for m in rss)} "
        f"= {sum(rss):.0f} MiB"
    )


async def run(port: int, clients: int, rounds: int, server_pid: int) -> None:
    challenge = await asyncio.to_thread(fresh_challenge)
    url = f"ws://127.0.0.1:{port}/ws/leaderboards/challenge/{challenge.id}/"
    await wait_for_server(url)
    for number in range(1, rounds + 1):
        await one_round(url, challenge, clients, number, server_pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    if connection.vendor != "postgresql" or not settings.REDIS_URL:
        sys.exit("This benchmark needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL).")
    call_command("migrate", verbosity=0, interactive=False)
    connection.close()
    server = serve(args.port, args.workers)
    try:
        asyncio.run(run(args.port, args.clients, args.rounds, server.pid))
    finally:
        stop(server)


if __name__ == "__main__":
    main()
