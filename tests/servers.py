"""Real servers for the tests that need one: uvicorn serving config.asgi on a free port."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
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
    output is read as it comes (a full pipe would stop the server mid-write) and printed on
    the way out, which pytest shows when the test fails.
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
    output: list[str] = []
    reader = threading.Thread(target=output.extend, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        _wait_until_listening(process, port, start_seconds, output)
        yield process, port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        reader.join(timeout=10)
        print("".join(output))


def _wait_until_listening(
    process: subprocess.Popen, port: int, seconds: float, output: list[str]
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            time.sleep(0.5)  # the reader takes the last lines
            pytest.fail("uvicorn exited:\n" + "".join(output))
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


class PrivateRedis:
    """A redis-server of the test's own (no persistence), to stop and start under a server."""

    def __init__(self, port: int, directory: str) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.directory = directory
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", self.directory]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _wait_for_port(self.port, process=self.process, what="redis-server")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None


@contextmanager
def private_redis(port: int | None = None) -> Iterator[PrivateRedis]:
    """A private redis-server on `port` (a free one by default), stopped on the way out."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="phc-redis-") as directory:
        server = PrivateRedis(port or free_port(), directory)
        server.start()
        try:
            yield server
        finally:
            server.stop()


class PrivatePostgres:
    """A PostgreSQL cluster of the test's own (trust auth, user postgres), on its own port:
    stopping or restarting it disturbs nothing else on the machine."""

    def __init__(self, port: int, directory: str) -> None:
        self.port = port
        self.directory = directory
        self.data = os.path.join(directory, "data")

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _pg_ctl(self, *arguments: str) -> None:
        _as_postgres([_postgres_program("pg_ctl"), "-D", self.data, "-w", *arguments])

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        log = os.path.join(self.directory, "server.log")
        self._pg_ctl("-o", options, "-l", log, "start")

    def stop(self) -> None:
        self._pg_ctl("-m", "fast", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def create_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """A fresh PostgreSQL cluster on a free port, removed on the way out. As root, the
    cluster runs as the postgres user (PostgreSQL refuses root)."""
    import shutil
    import tempfile

    directory = tempfile.mkdtemp(prefix="phc-postgres-")
    try:
        if os.geteuid() == 0:
            shutil.chown(directory, user="postgres")
        server = PrivatePostgres(free_port(), directory)
        initdb = [_postgres_program("initdb"), "-D", server.data, "-U", "postgres"]
        _as_postgres([*initdb, "-A", "trust", "--no-sync", "-E", "UTF8"])
        server.start()
        try:
            yield server
        finally:
            with suppress(subprocess.CalledProcessError):
                server.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _postgres_program(name: str) -> str:
    import glob
    import shutil

    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=_version_key)
    if not versions:
        pytest.skip(f"PostgreSQL's {name} is not installed")
    return versions[-1]


def _version_key(path: str) -> int:
    version = Path(path).parent.parent.name
    return int(version) if version.isdigit() else 0


def _as_postgres(command: list[str]) -> None:
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    # No pipes: a server pg_ctl starts would hold them open past pg_ctl's exit.
    subprocess.run(
        command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120
    )


def _wait_for_port(port: int, *, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{what} exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"{what} did not start")
