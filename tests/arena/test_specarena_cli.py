"""SpecArena's real CLI (`cli/src/index.ts`, run with node) against a live server of ours in
auth mode: two CLI players with their own Ed25519 keys play a whole psi game, and every
other command runs too, including a move after the end. Skips (saying so) only when node or
SpecArena's source is absent; see tests/arena/specarena/harness.py."""

import json
import os
import re
import subprocess
from dataclasses import dataclass

import pytest

from tests.arena.specarena.harness import arena_servers, specarena_source


@dataclass
class Run:
    command: str
    code: int
    data: object


class ArenaCli:
    def __init__(self, *, root, url: str, home) -> None:
        self.entry = str(root / "cli" / "src" / "index.ts")
        self.root, self.url, self.home = root, url, home
        self.runs: list[Run] = []

    def __call__(self, *args: str, auth: str | None = None) -> Run:
        options = ["--url", self.url] + (["--auth", auth] if auth else [])
        done = subprocess.run(
            ["node", "--import", "tsx", self.entry, *options, *args],
            cwd=self.root,
            # Not our environment: the CLI reads ARENA_URL and ARENA_AUTH (a setting of ours).
            env={"PATH": os.environ["PATH"], "HOME": str(self.home), "NO_COLOR": "1"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        try:
            data = json.loads(done.stdout)
        except json.JSONDecodeError:
            data = done.stdout + done.stderr
        shown = " ".join(["arena", *(["--auth", "s_…"] if auth else []), *args])
        run = Run(command=shown, code=done.returncode, data=data)
        self.runs.append(run)
        return run


def private_set(messages: list[dict]) -> set[int]:
    text = next(m["content"] for m in messages if "Your private set" in m["content"])
    return {int(n) for n in re.findall(r"\d+", text)}


@pytest.mark.django_db(transaction=True)
def test_specarenas_cli_plays_psi_and_runs_every_command_in_auth_mode(tmp_path):
    source = specarena_source()
    with arena_servers() as env:
        arena = ArenaCli(root=source.root, url=env["SPECARENA_AUTH_URL"], home=tmp_path)
        try:
            play(arena)
        finally:
            print("\nSpecArena CLI against our auth-mode server:")
            for run in arena.runs:
                print(f"  exit {run.code}  {run.command[:110]}")


def play(arena: ArenaCli) -> None:
    keys = [arena("identity", "new").data for _ in range(2)]
    assert all(key["privateKey"].endswith(".key") for key in keys)

    everything = arena("challenges", "metadata")
    assert everything.code == 0 and "psi" in everything.data and "secret-keeper" in everything.data
    assert arena("challenges", "metadata", "psi").data["name"] == "Private Set Intersection"
    assert arena("challenges", "metadata", "chess").code == 1

    created = arena("challenges", "create", "psi").data
    game, invites = created["id"], created["invites"]
    listed = arena("challenges", "list", "psi").data
    assert game in [c["id"] for c in listed["challenges"]]
    assert game in [c["id"] for c in arena("challenges", "list").data["challenges"]]

    joined = [
        arena("challenges", "join", invite, "--sign", key["privateKey"]).data
        for invite, key in zip(invites, keys, strict=True)
    ]
    sessions = [answer["sessionKey"] for answer in joined]
    assert all(answer["ChallengeID"] == game for answer in joined)
    assert arena("challenges", "join", invites[0], "--sign", keys[0]["privateKey"]).code == 1

    synced = [arena("challenges", "sync", game, auth=key).data["messages"] for key in sessions]
    sets = [private_set(messages) for messages in synced]
    later = arena("challenges", "sync", game, "--index", "2", auth=sessions[0]).data
    assert all(m["index"] >= 2 for m in later["messages"])

    said = arena("chat", "send", game, "shall we compare?", auth=sessions[0])
    assert said.code == 0 and said.data["from"] == invites[0] and said.data["index"] == 1
    heard = arena("chat", "sync", game, auth=sessions[1]).data["messages"]
    assert [m["content"] for m in heard] == ["shall we compare?"]
    assert arena("chat", "sync", game, "--index", "2", auth=sessions[1]).data["count"] == 0
    refused = arena("chat", "send", game, "no key")
    assert refused.code == 1 and refused.data == {"error": "from is required"} | {
        "code": "INVALID_REQUEST"
    }

    shared = " ".join(map(str, sorted(sets[0] & sets[1])))
    for key in sessions:
        sent = arena("challenges", "send", game, "guess", shared, auth=key)
        assert sent.code == 0 and sent.data == {"ok": "Message sent"}
    after = arena("challenges", "send", game, "guess", shared, auth=sessions[0])
    assert after.code == 0 and after.data == {"ok": "Message sent"}
    last = arena("challenges", "sync", game, auth=sessions[0]).data["messages"][-1]
    assert last["content"] == "ERR_GAME_NOT_RUNNING: Game not running."
    forged = arena("challenges", "send", game, "guess", "1", auth="s_0.forged")
    assert forged.code == 1 and forged.data["error"] == "Authentication required"

    ended = arena("challenges", "list", "psi").data["challenges"][0]["state"]
    assert ended["status"] == "ended"
    assert ended["scores"] == [{"security": 1, "utility": 1}, {"security": 1, "utility": 1}]

    board = arena("scoring", "psi").data
    assert {entry["playerId"] for entry in board["average"]} == {k["hash"] for k in keys}
    assert len(arena("scoring").data) == 2

    named = arena(
        "users", "update", "--username", "alice", "--model", "m-1", "--sign", keys[0]["privateKey"]
    ).data
    assert named == {"userId": keys[0]["hash"], "username": "alice", "model": "m-1"}
    assert arena("users", "get", keys[0]["hash"]).data["username"] == "alice"
    assert {u["userId"] for u in arena("users", "get").data} == {k["hash"] for k in keys}
    assert arena("users", "get", "nobody").code == 1
