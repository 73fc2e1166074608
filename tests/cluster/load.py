"""A load through nginx for the cluster's fault tests: Dify workflows reporting runs (each
retried with its own workflow_run_id until acknowledged, as Dify retries a failed HTTP
node) and readers of a board and a page. Every answer is noted."""

import threading
import time
import uuid
from dataclasses import dataclass, field

import httpx

from tests.cluster.site import EVALUATOR, SECRET, Site

RETRYABLE = {0, 502, 503, 504}


@dataclass(frozen=True)
class Answer:
    kind: str
    sent_at: float
    answered_at: float
    status: int
    retry_after: str | None
    body: str


@dataclass
class Load:
    base_url: str
    site: Site
    writers: int = 4
    readers: int = 2
    # Each writer waits this long between runs: four writers stay under the key's 1,200/m.
    pause: float = 0.25
    answers: list[Answer] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._write, args=(n,), daemon=True)
            for n in range(self.writers)
        ] + [threading.Thread(target=self._read, daemon=True) for _ in range(self.readers)]

    def start(self) -> "Load":
        for thread in self.threads:
            thread.start()
        return self

    def stop(self) -> "Load":
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=120)
        return self

    def _send(self, http: httpx.Client, kind: str, method: str, url: str, **kwargs) -> Answer:
        sent_at = time.monotonic()
        try:
            response = http.request(method, url, **kwargs)
        except httpx.HTTPError as error:
            answer = Answer(kind, sent_at, time.monotonic(), 0, None, repr(error))
        else:
            answer = Answer(
                kind,
                sent_at,
                time.monotonic(),
                response.status_code,
                response.headers.get("retry-after"),
                response.text[:300],
            )
        with self.lock:
            self.answers.append(answer)
        return answer

    def _write(self, n: int) -> None:
        headers = {"authorization": f"Bearer {self.site.bridge_key}"}
        with httpx.Client(base_url=self.base_url, timeout=30) as http:
            turn = 0
            while not self.stopping.is_set():
                turn += 1
                run_id = f"load-{uuid.uuid4()}"
                body = {
                    "challenge_id": self.site.challenge_id,
                    "output": f"It is {SECRET}." if turn % 3 == 0 else "No.",
                    "user": f"dify-{n}-{turn % 20}",
                    "workflow_run_id": run_id,
                }
                deadline = time.monotonic() + 90
                while True:
                    answer = self._send(
                        http, "bridge", "POST", EVALUATOR, json=body, headers=headers
                    )
                    if answer.status == 200:
                        with self.lock:
                            self.acknowledged.append(run_id)
                        break
                    if answer.status not in RETRYABLE or time.monotonic() > deadline:
                        with self.lock:
                            self.unfinished.append(run_id)
                        break
                    time.sleep(min(float(answer.retry_after or 0.2), 0.5))
                time.sleep(self.pause)

    def _read(self) -> None:
        site = self.site
        with httpx.Client(base_url=self.base_url, timeout=30) as http:
            while not self.stopping.is_set():
                board = f"/web/api/challenges/{site.challenge_id}/leaderboard?limit=20"
                self._send(http, "board", "GET", board)
                self._send(http, "page", "GET", f"/challenges/{site.slug}/")
                time.sleep(0.05)

    def wait_for(self, kind: str, count: int, *, since: float, patience: float = 60) -> None:
        """Until `count` 200s of `kind` were answered after `since`."""
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline:
            with self.lock:
                done = sum(
                    a.kind == kind and a.status == 200 and a.sent_at >= since for a in self.answers
                )
            if done >= count:
                return
            time.sleep(0.1)
        raise AssertionError(f"fewer than {count} answered {kind}s in {patience} s")

    def summary(self) -> dict:
        """Status counts per kind, and the longest time writers went without a 200."""
        counts: dict[str, dict[int, int]] = {}
        for answer in self.answers:
            per_kind = counts.setdefault(answer.kind, {})
            per_kind[answer.status] = per_kind.get(answer.status, 0) + 1
        acknowledged = sorted(
            a.answered_at for a in self.answers if a.kind == "bridge" and a.status == 200
        )
        gaps = [later - earlier for earlier, later in zip(acknowledged, acknowledged[1:])]
        return {
            "statuses": counts,
            "runs acknowledged": len(self.acknowledged),
            "runs unfinished": len(self.unfinished),
            "longest wait for a 200 (s)": round(max(gaps, default=0.0), 2),
        }

    def refusals(self) -> list[Answer]:
        return [a for a in self.answers if a.status != 200]
