"""Bridge benchmark: recorded attempts per second through /bridge/dify/challenge-evaluator.

    .venv/bin/python bench/bridge.py                # 20,000 requests, concurrency 32
    .venv/bin/python bench/bridge.py --requests 5000 --workers 3 --concurrency 64

Serves the app with uvicorn (several worker processes) on PostgreSQL (DATABASE_URL,
default database phc_bridge_bench, created and migrated when missing) and Redis
(REDIS_URL, default db 7: cache and rate limits), creates a workspace, a rules challenge
and a bridge key, then posts rules-mode evaluations that each record an attempt (a new
workflow_run_id and one of 1,000 players per call) at a fixed concurrency from one
asyncio process, and prints attempts/s and p50/p99 latency. Everything runs on this
machine and stops by itself; the load generator shares the CPU with the server.
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
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/phc_bridge_bench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")
# A throwaway key: the bench signs nothing that outlives it.
os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

from bench.database import database_create_if_missing  # noqa: E402
from bench.figures import percentile  # noqa: E402
from bench.serving import site_environment, stop, uvicorn_start  # noqa: E402

database_create_if_missing(url=os.environ["DATABASE_URL"])
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from challenges.models import Challenge, ChallengeAttempt  # noqa: E402
from challenges.services.bridge_keys import bridge_key_create  # noqa: E402
from challenges.services.challenges import challenge_create  # noqa: E402
from players.services import workspace_get_or_create  # noqa: E402

WORKSPACE = "Bridge benchmark"
PLAYERS = 1000
PATH = "/bridge/dify/challenge-evaluator"


def ensure_database() -> None:
    if connection.vendor != "postgresql":
        sys.exit("This benchmark needs PostgreSQL: set DATABASE_URL=postgres://…")
    call_command("migrate", verbosity=0, interactive=False)


def set_up() -> tuple[str, str]:
    """A fresh challenge and key; returns (challenge id, plain key)."""
    workspace = workspace_get_or_create(name=WORKSPACE)
    challenge = Challenge.objects.filter(workspace=workspace, slug="bench-bridge").first()
    if challenge is None:
        challenge = challenge_create(
            workspace=workspace,
            user=None,
            name="Bridge bench",
            slug="bench-bridge",
            success_type="contains",
            success_pattern="open sesame",
            max_attempts_per_hour=0,
        )
    _, raw_key = bridge_key_create(workspace=workspace, name="bench")
    connection.close()
    return str(challenge.id), raw_key


def serve(port: int, workers: int) -> subprocess.Popen:
    env = site_environment(
        BRIDGE_RATE_LIMIT=os.environ.get("BRIDGE_RATE_LIMIT", "1000000/m"),
    )
    return uvicorn_start(port=port, workers=workers, env=env, wait_seconds=30)


class Connection:
    """A minimal keep-alive HTTP/1.1 client: cheap enough to leave the CPU to the server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader = self.writer = None

    async def post(self, path: str, body: bytes, headers: str) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "connection" and value.strip().lower() == "close":
                self.writer = None
        payload = await self.reader.readexactly(length)
        return status, payload


async def drive(port: int, *, key: str, challenge_id: str, requests: int, concurrency: int):
    headers = f"Authorization: Bearer {key}\r\nContent-Type: text/plain\r\n"
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    succeeded = 0
    next_index = 0

    async def worker() -> None:
        nonlocal next_index, succeeded
        client = Connection(port)
        while next_index < requests:
            index = next_index
            next_index += 1
            body = json.dumps(
                {
                    "challenge_id": challenge_id,
                    "output": "Fine, fine: open sesame." if index % 3 == 0 else "No way.",
                    "user": f"bench-player-{index % PLAYERS}",
                    "workflow_run_id": str(uuid.uuid4()),
                    "tokens_total": 40 + index % 50,
                    "elapsed_ms": 300 + index % 700,
                }
            ).encode()
            started = time.perf_counter()
            status, payload = await client.post(PATH, body, headers)
            latencies.append(time.perf_counter() - started)
            statuses[status] = statuses.get(status, 0) + 1
            if status == 200 and b'"attempt_id"' in payload:
                succeeded += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, latencies, statuses, succeeded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=1_000)
    parser.add_argument("--port", type=int, default=8931)
    args = parser.parse_args()

    ensure_database()
    challenge_id, key = set_up()
    before = ChallengeAttempt.objects.filter(challenge_id=challenge_id).count()
    connection.close()
    server = serve(args.port, args.workers)
    try:
        asyncio.run(
            drive(
                args.port,
                key=key,
                challenge_id=challenge_id,
                requests=args.warmup,
                concurrency=args.concurrency,
            )
        )
        elapsed, latencies, statuses, recorded = asyncio.run(
            drive(
                args.port,
                key=key,
                challenge_id=challenge_id,
                requests=args.requests,
                concurrency=args.concurrency,
            )
        )
    finally:
        stop(server)
    in_database = ChallengeAttempt.objects.filter(challenge_id=challenge_id).count() - before
    print(
        f"uvicorn workers={args.workers} concurrency={args.concurrency} "
        f"requests={args.requests} (+{args.warmup} warm-up)"
    )
    print(f"statuses: {dict(sorted(statuses.items()))}")
    print(f"attempts recorded (answers with attempt_id): {recorded}")
    print(f"attempts in the database for this run, warm-up included: {in_database}")
    print(f"elapsed: {elapsed:.2f} s")
    print(f"recorded attempts/s: {recorded / elapsed:.0f}")
    print(
        f"latency ms: p50 {percentile(latencies, 0.50) * 1000:.1f}  "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f}  "
        f"mean {statistics.fmean(latencies) * 1000:.1f}  max {max(latencies) * 1000:.1f}"
    )


if __name__ == "__main__":
    main()
