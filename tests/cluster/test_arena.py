"""SPEC §8 for the arena: a game whose players talk to different processes ends with the
right scores, and an event stream held by one process carries what was said and done on
the others (and through nginx, unbuffered)."""

import json
import threading
import time

import httpx

from deploy.cluster import WEB_NAMES
from redblue.models import ArenaSession
from tests.arena.conftest import Agent


class OneProcess:
    """The calls tests/arena's Agent makes, sent to one process of the cluster."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30)

    def post(self, path: str, data: str = "", content_type: str = "", headers=None):
        headers = {**(headers or {}), "content-type": content_type or "application/json"}
        return self.http.post(path, content=data, headers=headers)

    def get(self, path: str, params=None, headers=None):
        return self.http.get(path, params=params or {}, headers=headers or {})


class EventStream:
    """An arena event stream read on a thread of its own: every `data:` event, in order."""

    def __init__(self, url: str, key: str) -> None:
        self.events: list[dict] = []
        self.status = 0
        self.opened = threading.Event()
        self.thread = threading.Thread(target=self._read, args=(url, key), daemon=True)
        self.thread.start()
        assert self.opened.wait(10), url
        assert self.status == 200, url

    def _read(self, url: str, key: str) -> None:
        try:
            with httpx.stream("GET", url, params={"key": key}, timeout=60) as response:
                self.status = response.status_code
                self.opened.set()
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        self.events.append(json.loads(line[len("data: ") :]))
        except httpx.HTTPError:
            pass  # the server or the test ended the stream

    def until(self, wanted, seconds: float = 15) -> dict:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for event in list(self.events):
                if wanted(event):
                    return event
            time.sleep(0.05)
        raise AssertionError(f"no such event among {self.events}")


def carried(event: dict) -> list[dict]:
    return [event["message"]] if event["type"] == "new_message" else event.get("messages", [])


def ended_listing(process: OneProcess, game: str) -> dict:
    """The game in a process's listing of ended games: a listing reads from the replica,
    which may be a moment behind the primary."""
    deadline = time.monotonic() + 10
    while True:
        listed = process.get("/api/v1/challenges/psi", {"status": "ended"}).json()
        found = [g for g in listed["challenges"] if g["id"] == game]
        if found or time.monotonic() > deadline:
            assert found, listed
            return found[0]
        time.sleep(0.1)


def test_a_game_played_on_two_processes_scores_right_and_streams_to_a_third(cluster):
    web = {name: OneProcess(cluster.web_url(name)) for name in WEB_NAMES}
    created = web["web-a"].post("/api/v1/challenges/psi")
    assert created.status_code == 200, created.text
    session = created.json()
    alice, bob = Agent(client=web["web-b"]), Agent(client=web["web-c"])
    alice.join(session["invites"][0])
    bob.join(session["invites"][1])
    game = session["id"]
    state = ArenaSession.objects.get(pk=game).game_state
    intersection = state["intersectionSet"]
    bob_only = sorted(set(state["userSets"][1]) - set(intersection))

    # Alice's streams: one on web-b, one through nginx.
    on_b = EventStream(f"{cluster.web_url('web-b')}/api/v1/chat/ws/{game}", alice.session_key)
    through_nginx = EventStream(f"{cluster.base_url}/api/v1/chat/ws/{game}", alice.session_key)
    operator_on_b = EventStream(
        f"{cluster.web_url('web-b')}/api/v1/chat/ws/challenge_{game}", alice.session_key
    )

    assert bob.chat("hello from web-c").status_code == 200
    for stream in (on_b, through_nginx):
        stream.until(lambda e: any(m["content"] == "hello from web-c" for m in carried(e)))

    assert bob.send("guess", ", ".join(map(str, intersection))).status_code == 200
    guess = " ".join(map(str, intersection + bob_only[:1]))
    assert alice.send("guess", guess).status_code == 200
    ended = operator_on_b.until(lambda e: e["type"] == "game_ended")["data"]
    assert ended["status"] == "ended"

    expected = [{"security": 1, "utility": 1}, {"security": -1, "utility": 1}]
    assert ended["scores"] == expected
    for name in WEB_NAMES:
        this = ended_listing(web[name], game)
        assert this["state"]["scores"] == expected, name
        assert this["state"]["attributions"] == [
            {"from": alice.invite, "to": bob.invite, "type": "security_breach"}
        ]
