"""Real servers for the tests that need one: uvicorn serving config.asgi on a free port."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def uvicorn_server(
    *, env: dict[str, str], workers: int = 1, start_seconds: float = 60
) -> Iterator[int]:
    """config.asgi under uvicorn with `env`; yields the port once it accepts connections."""
    with uvicorn_process(env=env, workers=workers, start_seconds=start_seconds) as (_, port):
        yield port


@contextmanager
def uvicorn_process(
    *,
    env: dict[str, str],
    workers: int = 1,
    start_seconds: float = 60,
    options: Sequence[str] | None = None,
) -> Iterator[tuple[subprocess.Popen, int]]:
    """uvicorn_server that also yields the process, for a test that stops it itself;
    `options` replace the default ones (no lifespan, a 5 s graceful shutdown).

    The server runs in its own process group so workers stop with their supervisor; its
    output is printed on the way out, which pytest shows when the test fails.
    """
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "config.asgi:application"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    if options is None:
        options = ["--lifespan", "off", "--timeout-graceful-shutdown", "5"]
    command += options
    if workers > 1:
        command += ["--workers", str(workers)]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_until_listening(process, port, start_seconds)
        yield process, port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            output, _ = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
        print(output)


def _wait_until_listening(process: subprocess.Popen, port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail("uvicorn exited:\n" + process.stdout.read())
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    pytest.fail("uvicorn did not start")


@contextmanager
def celery_worker(*, name: str) -> Iterator[subprocess.Popen]:
    """A real `celery worker` on its own queue (Redis broker), with this process sending
    its tasks there instead of running them eagerly; needs PostgreSQL and Redis."""
    from config.celery import app as celery_app
    from tests.conftest import subprocess_database_url

    queue = f"phc-{name}-{os.getpid()}"
    env = {
        **os.environ,
        "DATABASE_URL": subprocess_database_url(),
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "CELERY_QUEUE": queue,
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo"]
    command += ["-Q", queue, "--without-gossip", "--without-mingle", "--without-heartbeat"]
    command += ["-l", "warning"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    eager, default_queue = celery_app.conf.task_always_eager, celery_app.conf.task_default_queue
    celery_app.conf.task_always_eager = False
    celery_app.conf.task_default_queue = queue
    try:
        yield process
    finally:
        celery_app.conf.task_always_eager = eager
        celery_app.conf.task_default_queue = default_queue
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@contextmanager
def private_redis(port: int | None = None) -> Iterator[int]:
    """A redis-server of the test's own on a free port (or `port`, to start one again where
    a stopped one was), nothing saved; yields the port once it answers, stops it on the way
    out. A test may stop it early (SHUTDOWN, or a signal) to play an outage."""
    port = port or free_port()
    command = ["redis-server", "--bind", "127.0.0.1", "--port", str(port)]
    command += ["--save", "", "--appendonly", "no"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not start on port {port}")
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
