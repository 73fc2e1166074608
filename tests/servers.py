"""Real servers for the tests that need one: uvicorn serving config.asgi on a free port, a
Celery worker, and a private Redis or PostgreSQL that a fault test may stop and start."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
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

    It runs as a `process_group`.
    """
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "config.asgi:application"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    if options is None:
        options = ["--lifespan", "off", "--timeout-graceful-shutdown", "5"]
    command += options
    if workers > 1:
        command += ["--workers", str(workers)]
    with process_group(command, env=env) as (process, output):
        _wait_until_listening(process, port, start_seconds, output)
        yield process, port


@contextmanager
def process_group(
    command: list[str], *, env: dict[str, str], stop_seconds: float = 30
) -> Iterator[tuple[subprocess.Popen, list[str]]]:
    """`command` in a process group of its own, so its children (uvicorn's or Celery's
    workers) stop with it: SIGTERM on the way out, SIGKILL after `stop_seconds`. Its output
    is read as it comes (a full pipe would stop it mid-write) and printed on the way out,
    which pytest shows when the test fails."""
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
        yield process, output
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=stop_seconds)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
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
    """A redis-server of the test's own (no persistence, as in production): stop and start
    it at will, nothing else on the machine uses it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--loglevel", "warning"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(7) == b"+PONG\r\n":
                        return
            except OSError:
                pass
            time.sleep(0.05)
        pytest.fail("the private redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@contextmanager
def private_redis(port: int | None = None) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        from tests.conftest import require_service

        require_service("redis-server", False, "install redis-server")
    server = PrivateRedis(port or free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


POSTGRES_BIN = Path("/usr/lib/postgresql")


class PrivatePostgres:
    """A PostgreSQL cluster of the test's own, in a temporary directory, run as the
    postgres user with trust authentication: stop, start and restart it at will."""

    def __init__(self, bin_dir: Path, data_dir: Path, port: int) -> None:
        self.bin_dir = bin_dir
        self.data_dir = data_dir
        self.port = port

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _pg_ctl(self, *args: str) -> None:
        command = ["runuser", "-u", "postgres", "--", str(self.bin_dir / "pg_ctl")]
        command += ["-D", str(self.data_dir), "-w", "-t", "60", *args]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.data_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._pg_ctl("-o", options, "-l", str(self.data_dir / "server.log"), "start")

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("-m", mode, "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def create_database(self, name: str, *, copy_of: str = "") -> str:
        """A new database, empty or a copy of the one at URL `copy_of` (schema and rows)."""
        command = ["runuser", "-u", "postgres", "--", str(self.bin_dir / "createdb")]
        command += ["-h", "127.0.0.1", "-p", str(self.port), name]
        subprocess.run(command, check=True)
        if copy_of:
            dump = subprocess.run(
                [str(self.bin_dir / "pg_dump"), "--no-owner", copy_of],
                check=True,
                capture_output=True,
            )
            subprocess.run(
                [str(self.bin_dir / "psql"), "-q", "-v", "ON_ERROR_STOP=1", self.url(name)],
                input=dump.stdout,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        return self.url(name)


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    versions = sorted(POSTGRES_BIN.glob("*/bin/initdb"))
    if not versions or shutil.which("runuser") is None or os.geteuid() != 0:
        from tests.conftest import require_service

        require_service("a private PostgreSQL", False, "needs initdb, runuser and root")
    bin_dir = versions[-1].parent
    data_dir = Path(tempfile.mkdtemp(prefix="phc-pg-"))
    shutil.chown(data_dir, user="postgres")
    command = ["runuser", "-u", "postgres", "--", str(bin_dir / "initdb"), "-D", str(data_dir)]
    command += ["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    server = PrivatePostgres(bin_dir, data_dir, free_port())
    server.start()
    try:
        yield server
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):  # the test stopped it
            server.stop("immediate")
        shutil.rmtree(data_dir, ignore_errors=True)
