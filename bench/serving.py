"""Serving the app for a benchmark: uvicorn workers on 127.0.0.1, plain HTTP, DEBUG off."""

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def site_environment(**overrides: str) -> dict[str, str]:
    """This process's environment with DEBUG off and HTTPS off (plain HTTP on loopback),
    a throwaway key, warnings only and a pool per worker (ASGI runs each request's sync
    code on a fresh thread); `overrides` on top."""
    return {
        **os.environ,
        "DEBUG": "false",
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_HSTS_SECONDS": "0",
        "SECURE_COOKIES": "false",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-" + uuid.uuid4().hex),
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
        "DB_POOL_SIZE": os.environ.get("DB_POOL_SIZE", "8"),
        **overrides,
    }


def uvicorn_start(
    *,
    port: int,
    workers: int,
    env: dict[str, str],
    checkout: Path = ROOT,
    python: str | None = None,
    extra: tuple[str, ...] = (),
    wait_seconds: float | None = 60,
) -> subprocess.Popen:
    """Serve `config.asgi` of `checkout`; with `wait_seconds`, return once /health answers."""
    command = [
        python or str(ROOT / ".venv/bin/python"),
        "-m",
        "uvicorn",
        "config.asgi:application",
        "--host=127.0.0.1",
        f"--port={port}",
        f"--workers={workers}",
        "--loop=uvloop",
        "--http=httptools",
        "--no-access-log",
        "--log-level=warning",
        "--lifespan=off",
        "--timeout-graceful-shutdown=8",  # as in the README: gone within 10 s of SIGTERM
        *extra,
    ]
    server = subprocess.Popen(command, cwd=checkout, env=env, start_new_session=True)
    if wait_seconds is not None:
        wait_for(f"http://127.0.0.1:{port}/health", server, "uvicorn", seconds=wait_seconds)
    return server


def wait_for(url: str, process: subprocess.Popen, what: str, *, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"{what} exited")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    stop(process)
    sys.exit(f"{what} did not start within {seconds:.0f} s")


def stop(process: subprocess.Popen, *, timeout: float = 15) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def processes() -> dict[int, tuple[str, int, float]]:
    """pid -> (command name, parent pid, CPU seconds incl. its waited-for children)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                line = stat.read()
        except OSError:  # gone meanwhile
            continue
        name = line[line.index("(") + 1 : line.rindex(")")]
        fields = line[line.rindex(")") + 2 :].split()
        # utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after the name.
        ticks = sum(int(value) for value in fields[11:15])
        found[int(entry.name)] = (name, int(fields[1]), ticks / CLOCK_TICKS)
    return found


def process_tree(table: dict[int, tuple[str, int, float]], pids: list[int]) -> set[int]:
    """`pids` and all their descendants in a `processes()` table."""
    tree, grew = set(pids), True
    while grew:
        children = {pid for pid, (_, parent, _) in table.items() if parent in tree} - tree
        tree |= children
        grew = bool(children)
    return tree


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of `pid` and all its descendants (a server and its workers)."""
    table = processes()
    return sum(table[member][2] for member in process_tree(table, [pid]) if member in table)


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def database_backends_cpu_seconds(database: str) -> float:
    """CPU seconds of the PostgreSQL backends connected to `database` (the server is shared:
    its other databases' work is left out)."""
    backend = re.compile(rf"^postgres: .*\b{re.escape(database)}\b")
    return sum(
        cpu
        for pid, (name, _, cpu) in processes().items()
        if name == "postgres" and backend.match(command_line(pid))
    )
