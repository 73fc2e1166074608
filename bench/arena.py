"""Arena benchmark: psi games played to the end by scripted agents over HTTP.

    .venv/bin/python bench/arena.py                  # auth mode, 200 sessions, 2 workers
    .venv/bin/python bench/arena.py --mode standalone --runs 3
    .venv/bin/python bench/arena.py --mode auth --url http://127.0.0.1:18802   # any server

Without `--url` it serves the app with uvicorn (in the `--mode` asked) on PostgreSQL
(DATABASE_URL, default database phc_arena, migrated) and Redis (REDIS_URL, default db 11:
channel layer and cache). With `--url` it plays against a server already running there —
SpecArena's own, started from its checkout with `PORT=… npx tsx server/start.ts`
(standalone) or `PORT=… AUTH_SECRET=… npx tsx server/auth/start.ts` (auth), in memory —
and the client workload is byte for byte the same.

Every session runs at once, sharing `--connections` keep-alive connections (64: agents
behind a proxy). The two modes:

- auth: one agent pair per session, each with its own Ed25519 key, signs its join, reads
  its private set from /api/arena/sync, sends it on the chat channel, polls
  /api/chat/sync every 0.5 s for the other's set, and sends its one `guess` of the
  intersection (about 12 HTTP calls a game).
- standalone: create, two joins, two syncs, two guesses a game (7 calls): each player
  joins, reads its set from /api/arena/sync as `from` its invite, and guesses five numbers
  of its own set (a guess may not be larger than the other's set).

Prints, per run, games per second (from the first create to the last game ended) and the
latency of `POST /api/arena/message` (p50, p99, max), the 1-minute load average before
the run (the VM is shared), and CPU per game, which the load of other work changes far
less than games/s: the client's own, the server's (utime + stime of its processes, workers
included: ours, or with `--url` the process `--server-pid` names) and, for ours, the
PostgreSQL backends of its database.
"""

import argparse
import asyncio
import hashlib
import logging
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.figures import percentile  # noqa: E402
from bench.serving import (  # noqa: E402
    database_backends_cpu_seconds,
    site_environment,
    stop,
    tree_cpu_seconds,
    uvicorn_start,
)

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/phc_arena")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/11")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

from bench.database import database_create_if_missing  # noqa: E402

database_create_if_missing(url=os.environ["DATABASE_URL"])
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402


def migrate() -> None:
    if connection.vendor != "postgresql":
        sys.exit("This benchmark needs PostgreSQL: set DATABASE_URL=postgres://…")
    call_command("migrate", verbosity=0, interactive=False)
    connection.close()


def serve(port: int, workers: int, mode: str) -> subprocess.Popen:
    return uvicorn_start(
        port=port, workers=workers, env=site_environment(ARENA_AUTH=mode), wait_seconds=30
    )


# How often a waiting agent asks for the other's chat message: a patient agent, not a spin.
POLL_SECONDS = 0.5


class Client:
    """`connections` keep-alive connections, one request on each at a time: a queue of
    single-connection httpx clients. One shared httpx pool of 64 spends more CPU per
    request than the servers do (httpcore scans every connection on every request), which
    made the load generator, not the server, the bottleneck."""

    def __init__(self, url: str, connections: int) -> None:
        self.clients = [
            httpx.AsyncClient(
                base_url=url,
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
                timeout=120,
            )
            for _ in range(connections)
        ]
        self.free: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for client in self.clients:
            self.free.put_nowait(client)

    async def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        client = await self.free.get()
        try:
            return await client.request(method, path, **kwargs)
        finally:
            self.free.put_nowait(client)

    async def post(self, path: str, **kwargs) -> httpx.Response:
        return await self.request("POST", path, **kwargs)

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()


class Player:
    def __init__(self, client: Client, message_latencies: list[float]) -> None:
        self.client = client
        self.latencies = message_latencies
        self.key = Ed25519PrivateKey.generate()
        self.public_hex = (
            self.key.public_key()
            .public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
            .hex()
        )
        self.user_id = hashlib.sha256(self.public_hex.encode()).hexdigest()

    async def call(self, method: str, path: str, **kwargs) -> dict:
        response = await self.client.request(method, path, **kwargs)
        if response.status_code != 200:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json()

    async def play_standalone(self, invite: str) -> None:
        joined = await self.call("POST", "/api/v1/arena/join", json={"invite": invite})
        game = joined["ChallengeID"]
        told = await self.call(
            "GET", "/api/v1/arena/sync", params={"channel": game, "from": invite}
        )
        mine = next(m["content"] for m in told["messages"] if m["to"] == invite)
        my_set = sorted({int(n) for n in re.findall(r"\d+", mine)})
        started = time.perf_counter()
        await self.call(
            "POST",
            "/api/v1/arena/message",
            json={
                "challengeId": game,
                "from": invite,
                "messageType": "guess",
                "content": " ".join(map(str, my_set[:5])),
            },
        )
        self.latencies.append(time.perf_counter() - started)

    async def play(self, invite: str) -> None:
        stamp = int(time.time() * 1000)
        joined = await self.call(
            "POST",
            "/api/v1/arena/join",
            json={
                "invite": invite,
                "publicKey": self.public_hex,
                "signature": self.key.sign(f"arena:v1:join:{invite}:{stamp}".encode()).hex(),
                "timestamp": stamp,
            },
        )
        game = joined["ChallengeID"]
        auth = {"Authorization": f"Bearer {joined['sessionKey']}"}
        told = await self.call("GET", "/api/v1/arena/sync", params={"channel": game}, headers=auth)
        mine = next(m["content"] for m in told["messages"] if m["to"] == invite)
        my_set = {int(n) for n in re.findall(r"\d+", mine)}
        await self.call(
            "POST",
            "/api/v1/chat/send",
            json={"channel": game, "content": " ".join(map(str, sorted(my_set)))},
            headers=auth,
        )
        while True:
            chat = await self.call(
                "GET", "/api/v1/chat/sync", params={"channel": game}, headers=auth
            )
            theirs = [m for m in chat["messages"] if m["from"] != invite]
            if theirs:
                break
            await asyncio.sleep(POLL_SECONDS)
        other = {int(n) for n in re.findall(r"\d+", theirs[0]["content"])}
        started = time.perf_counter()
        await self.call(
            "POST",
            "/api/v1/arena/message",
            json={
                "challengeId": game,
                "messageType": "guess",
                "content": " ".join(map(str, sorted(my_set & other))),
            },
            headers=auth,
        )
        self.latencies.append(time.perf_counter() - started)


async def one_game(client: Client, latencies: list[float], mode: str) -> None:
    response = await client.post("/api/v1/challenges/psi")
    response.raise_for_status()
    session = response.json()
    players = [Player(client, latencies) for _ in session["invites"]]
    plays = (
        (player.play(invite) if mode == "auth" else player.play_standalone(invite))
        for player, invite in zip(players, session["invites"], strict=True)
    )
    await asyncio.gather(*plays)


async def run(url: str, sessions: int, connections: int, mode: str) -> tuple[float, list[float]]:
    latencies: list[float] = []
    # 200 games at once share a bounded set of keep-alive connections, like agents behind a proxy.
    client = Client(url, connections)
    try:
        started = time.perf_counter()
        await asyncio.gather(*(one_game(client, latencies, mode) for _ in range(sessions)))
        return time.perf_counter() - started, latencies
    finally:
        await client.close()


def main() -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("auth", "standalone"), default="auth")
    parser.add_argument("--url", help="play against a server already running there")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--server-pid",
        type=int,
        help="with --url: the server's process (its workers included) whose CPU to report",
    )
    args = parser.parse_args()
    server = None
    if args.url is None:
        migrate()
        server = serve(args.port, args.workers, args.mode)
    url = args.url or f"http://127.0.0.1:{args.port}"
    print(
        f"{url} ({'ours, ' + str(args.workers) + ' uvicorn workers' if server else 'given'}), "
        f"{args.mode} mode: {args.sessions} concurrent psi sessions, "
        f"{args.connections} client connections"
    )
    server_pid = server.pid if server is not None else args.server_pid
    database = connection.settings_dict["NAME"]
    try:
        for number in range(1, args.runs + 1):
            load = os.getloadavg()[0]
            cpu_before = tree_cpu_seconds(server_pid) if server_pid else 0.0
            database_before = database_backends_cpu_seconds(database) if server else 0.0
            client_before = time.process_time()
            elapsed, latencies = asyncio.run(run(url, args.sessions, args.connections, args.mode))
            client = (time.process_time() - client_before) / args.sessions
            cpu = f"; CPU a game: client {client * 1000:.1f} ms"
            if server_pid:
                per_game = (tree_cpu_seconds(server_pid) - cpu_before) / args.sessions
                cpu += f", server {per_game * 1000:.1f} ms"
            if server:
                used = database_backends_cpu_seconds(database) - database_before
                cpu += f", PostgreSQL backends {used / args.sessions * 1000:.1f} ms"
            print(
                f"run {number} (load {load:.2f}): {args.sessions / elapsed:.1f} games/s "
                f"({elapsed:.2f} s); POST /api/arena/message ({len(latencies)} calls): "
                f"p50 {statistics.median(latencies) * 1000:.0f} ms, "
                f"p99 {percentile(latencies, 0.99) * 1000:.0f} ms, "
                f"max {max(latencies) * 1000:.0f} ms{cpu}",
                flush=True,
            )
    finally:
        if server is not None:
            stop(server)


if __name__ == "__main__":
    main()
