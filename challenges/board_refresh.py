"""Live boards redrawn after writes: coalesced, off the writer's path.

A write that changes a board does not draw it. After its commit it drops the board's
cached drawing — one Redis call, so a read right after the write draws from the database
and sees it — and marks the board dirty (`board_refresh_soon`). One thread per process
draws each dirty board, stores the drawing and pushes the live frame (challenges/live.py);
a board marked again while it is being drawn is drawn once more afterwards, no sooner
than BOARD_REFRESH_SECONDS after the last drawing began. So a write's latency does not
grow with the size of its board, a burst of fifty writes costs a few drawings instead of
fifty, and the last frame a socket gets was drawn after the last commit.

Across processes a Redis key per board says that a drawing is pending: the process that
set it draws; a commit in another process that finds it set leaves the drawing to that
process, which deletes the key before it reads the board and so reads that commit too.
The key expires after PENDING_SECONDS, in case the process that set it died. Without
Redis (the embedded default) each process coalesces its own writes.
"""

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connections
from redis.exceptions import RedisError

from challenges.board_cache import board_cache_drop, sync_redis_client

logger = logging.getLogger(__name__)

PENDING_SECONDS = 5

# How many drawings this process made, by kind: for tests and benchmarks.
refresh_counts: Counter = Counter()

Job = tuple[str, str]
_drawers: dict[str, Callable[[str], None]] = {}


def board_drawer(kind: str, draw: Callable[[str], None]) -> None:
    """Register how a kind of board is drawn and pushed, given its id."""
    _drawers[kind] = draw


def _pending_key(job: Job) -> str:
    prefix = settings.CACHES["default"].get("KEY_PREFIX") or "phc"
    return f"{prefix}:board-refresh:{job[0]}:{job[1]}"


class _Refresher:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pending: dict[Job, None] = {}
        self.wake = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self.thread: threading.Thread | None = None
        self.pid = 0

    def mark(self, job: Job) -> None:
        with self.lock:
            self.pending[job] = None
            self.idle.clear()
            if self.thread is None or self.pid != os.getpid() or not self.thread.is_alive():
                self.pid = os.getpid()
                self.thread = threading.Thread(target=self._run, name="board-refresh", daemon=True)
                self.thread.start()
        self.wake.set()

    def _take(self) -> list[Job]:
        with self.lock:
            self.wake.clear()
            jobs, self.pending = list(self.pending), {}
            if not jobs:
                self.idle.set()
            return jobs

    def _run(self) -> None:
        while True:
            self.wake.wait()
            jobs = self._take()
            if not jobs:
                continue
            began = time.monotonic()
            try:
                for job in jobs:
                    _draw(job)
            finally:
                # This thread's connections go back between rounds.
                connections.close_all()
            # Marks that arrive meanwhile wait for the next round.
            rest = settings.BOARD_REFRESH_SECONDS - (time.monotonic() - began)
            if rest > 0:
                time.sleep(rest)
            if not self.pending:
                with self.lock:
                    if not self.pending:
                        self.idle.set()


_refresher = _Refresher()


def _draw(job: Job) -> None:
    client = sync_redis_client()
    if client is not None:
        try:
            client.delete(_pending_key(job))
        except RedisError:
            logger.warning("Board refresh: could not clear %s's pending mark", job)
    refresh_counts[job[0]] += 1
    try:
        _drawers[job[0]](job[1])
    except Exception:
        logger.exception("Board refresh: drawing %s failed", job)


def board_refresh_soon(*, kind: str, board_id: Any, drop_cached: bool = False) -> None:
    """After a commit: have the board drawn and pushed soon (`drop_cached`: forget its
    cached drawing now, so reads meanwhile come from the database)."""
    if drop_cached:
        board_cache_drop(challenge_id=board_id)
    job = (kind, str(board_id))
    client = sync_redis_client()
    if client is not None:
        try:
            if not client.set(_pending_key(job), os.getpid(), nx=True, ex=PENDING_SECONDS):
                return  # pending in some process, which reads this commit when it draws
        except RedisError:
            logger.warning("Board refresh: Redis did not answer; this process draws %s", job)
    _refresher.mark(job)


def board_refreshes_wait(timeout: float = 10.0) -> bool:
    """Wait until this process has drawn every board marked so far (tests, shutdown)."""
    return _refresher.idle.wait(timeout)
