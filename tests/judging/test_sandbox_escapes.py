"""Each way an installed plugin once got out of the sandbox (issue 8, finding 4) now fails."""

import json
import os
import socket
import sysconfig
import threading
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from judging.plugins import evaluate_with_plugin
from judging.sandbox import sandbox_problem
from tests.conftest import require_service

POSTGRES_SOCKET = "/var/run/postgresql/.s.PGSQL.5432"


@pytest.fixture(autouse=True)
def _bubblewrap():
    require_service("the bubblewrap plugin sandbox", not sandbox_problem(), sandbox_problem())


def attempt(plugin_id, **config):
    return evaluate_with_plugin(plugin_id=plugin_id, goal="g", response="r", config=config)


def processes_showing(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize(
    "path",
    ["/etc/shadow", "/etc/passwd", str(Path(django_settings.BASE_DIR) / "config" / "settings.py")],
)
def test_it_keeps_host_files_out_of_a_plugins_reach(path):
    verdict = attempt("test-reads-file", path=path)

    assert verdict.passed is False
    assert verdict.raw["plugin"] == {"error": "FileNotFoundError"}


def test_it_shows_a_plugin_none_of_the_servers_environment(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://canary:canary-password@db/phc")
    monkeypatch.setenv("PHC_CANARY_SECRET", "canary-7f3a")

    verdict = attempt("test-reads-environment")

    seen = json.dumps(verdict.raw["plugin"]["seen"])
    for leaked in ("canary-password", "canary-7f3a", "DATABASE_URL", "SECRET_KEY"):
        assert leaked not in seen
    assert django_settings.SECRET_KEY not in seen
    assert set(verdict.raw["plugin"]["seen"]["os.environ"]) <= {"PATH", "LANG", "HOME", "PWD"}


def test_it_keeps_a_plugin_away_from_the_postgresql_socket():
    if not os.path.exists(POSTGRES_SOCKET):
        pytest.skip(f"no PostgreSQL socket at {POSTGRES_SOCKET} on this machine")

    verdict = attempt("test-unix-socket", path=POSTGRES_SOCKET)

    assert verdict.passed is False
    assert "FileNotFoundError" in verdict.raw["plugin"]["stderr"]


@pytest.mark.parametrize("kind", ["file", "abstract"])
def test_it_keeps_a_plugin_away_from_a_unix_socket_the_server_opened(tmp_path, kind):
    path = str(tmp_path / "server.sock") if kind == "file" else f"\0phc-test-{uuid.uuid4().hex}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen()
    listener.settimeout(0.2)
    try:
        verdict = attempt("test-unix-socket", path=path)

        assert verdict.passed is False
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()


@pytest.mark.parametrize(
    "target",
    [
        Path(django_settings.BASE_DIR) / "plugin-was-here.txt",
        Path(sysconfig.get_paths()["purelib"]) / "plugin_was_here.py",
    ],
)
def test_it_keeps_a_plugin_from_writing_into_the_app_or_its_packages(target):
    try:
        verdict = attempt("test-writes-file", path=str(target), content="import os")

        assert verdict.passed is False
        # A read-only file system, or (when the checkout lives under /tmp) a folder of the
        # sandbox's own tmpfs that its user may not write.
        assert verdict.raw["plugin"]["error"] in ("OSError", "PermissionError")
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def test_it_gives_a_plugin_a_private_tmp_that_the_host_never_sees():
    target = Path("/tmp") / f"plugin-was-here-{uuid.uuid4().hex}"  # noqa: S108
    try:
        verdict = attempt("test-writes-file", path=str(target))

        assert verdict.passed is True
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def test_it_ends_a_detached_child_with_the_sandbox_at_the_timeout(settings):
    settings.PLUGIN_TIMEOUT_SECONDS = 1.5
    marker = f"phc-outlives-{uuid.uuid4().hex}"
    seen_during_the_call = []
    verdicts = []
    call = threading.Thread(
        target=lambda: verdicts.append(attempt("test-outlives-timeout", marker=marker))
    )
    call.start()
    while call.is_alive():
        seen_during_the_call += processes_showing(marker)
        time.sleep(0.05)
    deadline = time.monotonic() + 2
    while processes_showing(marker) and time.monotonic() < deadline:
        time.sleep(0.05)

    assert seen_during_the_call, "the plugin's detached child never started"
    assert verdicts[0].raw["error"] == "timeout"
    assert processes_showing(marker) == []


def test_it_bounds_the_processes_a_plugin_can_start(settings):
    settings.PLUGIN_MAX_PROCESSES = 8

    verdict = attempt("test-fork-bomb", children=200)

    assert verdict.passed is False
    assert verdict.raw["plugin"]["forked"] < 8
    assert verdict.raw["plugin"]["error"] == "BlockingIOError"
