"""Runs SpecArena's own code (its server test suite, its CLI) against our arena.

SpecArena's source comes from a git repository (`SPECARENA_GIT`, by default the read-only
mirror of nicola/specarena on this machine), is exported to a cache directory outside our
repository and gets its npm dependencies there once. Nothing of it is copied into ours.
"""

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

HERE = Path(__file__).resolve().parent
DEFAULT_GIT = "/work/.mirror/nicola+specarena/repo"


@dataclass(frozen=True)
class Source:
    root: Path
    commit: str


def _cache_root() -> Path:
    configured = os.environ.get("SPECARENA_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "prompt-challenges"


def specarena_source() -> Source:
    """SpecArena's checked-out source with its npm dependencies, or a skip that says why.

    Skips only when node or the source is absent (explicitly, CI included); a failing
    npm install is a failure."""
    node = shutil.which("node")
    git_dir = os.environ.get("SPECARENA_GIT", DEFAULT_GIT)
    missing = []
    if node is None:
        missing.append("node is not installed (SpecArena's code runs on node 20)")
    if not Path(git_dir).exists():
        missing.append(f"SpecArena's source is absent (no git repository at {git_dir})")
    if missing:
        message = "SpecArena compatibility NOT TESTED: " + "; ".join(missing)
        print(message)
        pytest.skip(message)
    commit = subprocess.run(
        ["git", "-C", git_dir, "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    root = _cache_root() / f"specarena-{commit[:12]}"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".specarena-{commit[:12]}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".installed").exists():
            _export(git_dir, root)
            installed = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=900,
            )
            if installed.returncode != 0:
                pytest.fail(f"npm ci of SpecArena failed:\n{installed.stdout}\n{installed.stderr}")
            (root / ".installed").write_text(commit)
    return Source(root=root, commit=commit)


def _export(git_dir: str, root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    archive = root / ".source.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "-C", git_dir, "archive", "HEAD"], check=True, stdout=out)
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")
    archive.unlink()


# --- our servers -------------------------------------------------------------------


@contextlib.contextmanager
def arena_servers() -> Iterator[dict[str, str]]:
    """Two uvicorn servers of our app on the test database, one in standalone mode (where
    SpecArena's in-process engine calls go) and one in auth mode, plus the control
    endpoint; yields the URLs as the adapter's environment."""
    from django.conf import settings
    from django.db import connection

    from tests.conftest import redis_up, require_service, subprocess_database_url
    from tests.servers import uvicorn_server

    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    base = {
        **os.environ,
        "DATABASE_URL": subprocess_database_url(),
        "SECRET_KEY": settings.SECRET_KEY,
        "CELERY_TASK_ALWAYS_EAGER": "true",
        "DEBUG": "false",
        "SECURE_COOKIES": "false",
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "localhost,127.0.0.1",
        "SITE_URL": "http://127.0.0.1",
    }
    base.pop("DJANGO_SETTINGS_MODULE", None)
    with (
        uvicorn_server(env={**base, "ARENA_AUTH": "standalone"}) as standalone,
        uvicorn_server(env={**base, "ARENA_AUTH": "auth"}) as auth,
        control_server() as control,
    ):
        yield {
            "SPECARENA_STANDALONE_URL": f"http://localhost:{standalone}",
            "SPECARENA_AUTH_URL": f"http://localhost:{auth}",
            "SPECARENA_CONTROL_URL": control,
        }


# --- the control endpoint: what SpecArena's tests read from its engine's storage ---------


def _challenge_json(session) -> dict[str, Any]:
    """A session as SpecArena's engine stores it, private state included."""
    from redblue.arena.services import epoch_ms

    state: dict[str, Any] = {
        "status": session.status,
        "scores": session.scores,
        "players": session.players,
        "playerIdentities": session.player_identities,
        "attributions": session.attributions,
    }
    if session.completed_at:
        state["completedAt"] = epoch_ms(session.completed_at)
    return {
        "id": str(session.pk),
        "name": session.name,
        "createdAt": epoch_ms(session.created_at),
        "challengeType": session.challenge_type_id,
        "invites": session.invites,
        "state": state,
        "gameState": session.game_state,
        "gameCategory": session.game_category,
    }


def _control(method: str, path: str, params: dict[str, str], body: dict[str, Any]) -> Any:
    from redblue.arena import services
    from redblue.models import ArenaInvite, ArenaMessage, ArenaSession, ArenaUser, ScoringEntry

    if method == "POST" and path == "/reset":
        ArenaMessage.objects.all().delete()
        ArenaSession.objects.all().delete()
        ArenaUser.objects.all().delete()
        ScoringEntry.objects.all().delete()
        return {"ok": True}
    if path == "/challenge":
        session = None
        if params.get("id"):
            session = ArenaSession.objects.filter(pk=_uuid(params["id"])).first()
        elif params.get("invite"):
            invite = ArenaInvite.objects.filter(code=params["invite"]).first()
            session = invite.session if invite else None
        return {"challenge": _challenge_json(session) if session else None}
    if path == "/messages":
        messages = ArenaMessage.objects.filter(channel=params["channel"]).order_by("index")
        return [
            {
                "channel": m.channel,
                "from": m.sender,
                "to": m.recipient or None,
                "content": m.content,
                "index": m.index,
                "timestamp": m.timestamp_ms,
            }
            for m in messages
        ]
    if method == "POST" and path == "/prune":
        now = datetime.fromtimestamp(body["now"] / 1000, tz=UTC)
        return {"removed": services.arena_sessions_prune(now=now)}
    if method == "POST" and path == "/users":
        user = services.arena_user_update(
            user_id=body["userId"],
            username=body.get("username"),
            model=body.get("model"),
            is_benchmark=body.get("isBenchmark"),
        )
        return {"userId": user.user_id, "username": user.username, "model": user.model}
    raise LookupError(path)


def _uuid(text: str):
    import uuid

    try:
        return uuid.UUID(text)
    except ValueError:
        return None


class _ControlHandler(BaseHTTPRequestHandler):
    def _answer(self, method: str) -> None:
        from django.db import connection

        url = urlsplit(self.path)
        params = {name: values[0] for name, values in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        try:
            data, status = _control(method, url.path, params, body), 200
        except LookupError:
            data, status = {"error": "unknown control path"}, 404
        except Exception as failure:  # the node side prints it with the failing test
            data, status = {"error": repr(failure)}, 500
        finally:
            connection.close()
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def log_message(self, format: str, *args: Any) -> None:
        return None


@contextlib.contextmanager
def control_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ControlHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# --- running node's test runner --------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    name: str  # "<file> > <suite> > <test>"
    passed: bool
    detail: str


def node_test_run(
    *, source: Source, files: list[str], env: dict[str, str], home: Path, timeout: int = 900
) -> tuple[list[Outcome], str]:
    """SpecArena's test files, unchanged, one file at a time, with their server modules
    resolved to our adapter; every test's outcome and the runner's output."""
    outcomes: list[Outcome] = []
    output: list[str] = []
    for file in files:
        command = [
            "node",
            "--require",
            str(HERE / "resolve.cjs"),
            "--import",
            "tsx",
            "--test",
            "--test-force-exit",
            "--test-concurrency=1",
            "--test-reporter=tap",
            file,
        ]
        run = subprocess.run(
            command,
            cwd=source.root,
            env={**os.environ, **env, "HOME": str(home), "NO_COLOR": "1", "FORCE_COLOR": "0"},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        output.append(f"$ {' '.join(command)}\n{run.stdout}\n{run.stderr}")
        found = tap_outcomes(run.stdout, file)
        outcomes += found or [Outcome(name=f"{file} > (did not run)", passed=False, detail="")]
    return outcomes, "\n".join(output)


TAP_RESULT = re.compile(r"^(?P<indent> *)(?P<status>not ok|ok) \d+ - (?P<name>.*?)(?: # SKIP.*)?$")
TAP_SUBTEST = re.compile(r"^(?P<indent> *)# Subtest: (?P<name>.*)$")


def tap_outcomes(tap: str, file: str) -> list[Outcome]:
    """The leaf tests of node's TAP output, named `<file> > <suite> > … > <test>`."""
    trail: list[str] = []
    results: list[tuple[str, bool, list[str]]] = []
    current: list[str] | None = None
    for line in tap.splitlines():
        if match := TAP_SUBTEST.match(line):
            level = len(match["indent"]) // 4
            trail = [*trail[:level], match["name"]]
            current = None
        elif match := TAP_RESULT.match(line):
            level = len(match["indent"]) // 4
            path = " > ".join([file, *trail[:level], match["name"]])
            current = []
            results.append((path, match["status"] == "ok", current))
        elif current is not None and line.strip():
            current.append(line.strip())
    names = [path for path, _, _ in results]
    return [
        Outcome(name=path, passed=passed, detail="\n".join(detail)[:1500])
        for path, passed, detail in results
        if not any(other.startswith(path + " > ") for other in names)
    ]
