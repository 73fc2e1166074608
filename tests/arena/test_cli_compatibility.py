"""SpecArena's command-line client against our server, request for request.

Each helper sends what `cli/src/index.ts` of nicola/specarena sends for one command: the
path under /api/v1, `Content-Type: application/json` on POSTs only, `Authorization: Bearer`
when `--auth` is given, `from` in the query (GET) or merged first into the body (POST)
when `--from` is given, and no body at all for `challenges create` without `--from`. Each
answer is read the way the CLI reads it: `res.json()` must parse, whatever the status, and
`res.ok` decides the exit code.
"""

import json
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_der_private_key,
)
from django.test import Client

from tests.arena.conftest import game_state

pytestmark = pytest.mark.django_db


class Cli:
    """`arena [--auth KEY] [--from ID] <command>` as one process would run it."""

    def __init__(self, *, auth: str | None = None, sender: str | None = None) -> None:
        self.auth = auth
        self.sender = sender
        self.client = Client()

    def _headers(self, method: str) -> dict:
        headers = {}
        if self.auth:
            headers["Authorization"] = f"Bearer {self.auth}"
        return headers

    def request(self, method: str, path: str, body: dict | None = None, query: dict | None = None):
        params = {}
        if method == "GET" and self.sender:
            params["from"] = self.sender
        params.update(query or {})
        if method == "GET":
            response = self.client.get(path, params, headers=self._headers(method))
        else:
            payload = {"from": self.sender, **(body or {})} if self.sender else body
            response = self.client.post(
                path,
                data="" if payload is None else json.dumps(payload),
                content_type="application/json",
                headers=self._headers(method),
            )
        data = json.loads(response.content)  # the CLI's res.json(): must never fail
        ok = 200 <= response.status_code < 300
        return ok, data

    # challenges group
    def metadata(self, name: str | None = None):
        return self.request("GET", f"/api/v1/metadata/{name}" if name else "/api/v1/metadata")

    def list(self, name: str | None = None):
        return self.request("GET", f"/api/v1/challenges/{name}" if name else "/api/v1/challenges")

    def create(self, name: str):
        return self.request("POST", f"/api/v1/challenges/{name}")

    def join(self, invite: str, keyfile_text: str | None = None):
        if keyfile_text is None:
            return self.request("POST", "/api/v1/arena/join", {"invite": invite})
        private = load_der_private_key(bytes.fromhex(keyfile_text.strip()), password=None)
        public_hex = (
            private.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo).hex()
        )
        timestamp = int(time.time() * 1000)
        signature = private.sign(f"arena:v1:join:{invite}:{timestamp}".encode()).hex()
        return self.request(
            "POST",
            "/api/v1/arena/join",
            {
                "invite": invite,
                "publicKey": public_hex,
                "signature": signature,
                "timestamp": timestamp,
            },
        )

    def sync(self, channel: str, index: int = 0):
        return self.request(
            "GET", "/api/v1/arena/sync", query={"channel": channel, "index": str(index)}
        )

    def send(self, challenge_id: str, method: str, content: str):
        return self.request(
            "POST",
            "/api/v1/arena/message",
            {"challengeId": challenge_id, "messageType": method, "content": content},
        )

    # chat group
    def chat_send(self, channel: str, content: str):
        return self.request("POST", "/api/v1/chat/send", {"channel": channel, "content": content})

    def chat_sync(self, channel: str, index: int = 0):
        return self.request(
            "GET", "/api/v1/chat/sync", query={"channel": channel, "index": str(index)}
        )

    # scoring
    def scoring(self, type_name: str | None = None):
        return self.request(
            "GET", f"/api/v1/scoring/{type_name}" if type_name else "/api/v1/scoring"
        )


def identity_new() -> str:
    """What `arena identity new` writes to its .key file: PKCS#8 DER as hex, newline."""
    key = Ed25519PrivateKey.generate()
    return key.private_bytes(Encoding.DER, PrivateFormat.PKCS8, NoEncryption()).hex() + "\n"


def test_the_cli_plays_psi_in_auth_mode(settings):
    settings.ARENA_AUTH = "auth"
    ok, created = Cli().create("psi")
    assert ok and created["challengeType"] == "psi"
    keys = [identity_new(), identity_new()]

    joined = [
        Cli().join(invite, keyfile)
        for invite, keyfile in zip(created["invites"], keys, strict=True)
    ]

    assert all(ok for ok, _ in joined)
    game = joined[0][1]["ChallengeID"]
    players = [Cli(auth=data["sessionKey"]) for _, data in joined]
    ok, synced = players[0].sync(game)
    assert ok and synced["count"] == len(synced["messages"]) >= 1
    assert synced["messages"][0]["content"].startswith("Your private set is")
    ok, sent = players[0].chat_send(game, "shall we compare?")
    assert ok and sent["index"] == 1 and sent["channel"] == game and sent["to"] is None
    ok, chat = players[1].chat_sync(game)
    assert ok and chat["messages"][0]["content"] == "shall we compare?"
    shared = " ".join(map(str, game_state(game)["intersectionSet"]))
    for player in players:
        ok, answer = player.send(game, "guess", shared)
        assert ok and answer == {"ok": "Message sent"}
    # A move after the end is accepted and answered on the player's operator channel.
    ok, again = players[0].send(game, "guess", shared)
    assert ok and again == {"ok": "Message sent"}
    ok, synced = players[0].sync(game)
    assert synced["messages"][-1]["content"] == "ERR_GAME_NOT_RUNNING: Game not running."
    assert synced["messages"][-1]["to"] == created["invites"][0]
    ok, listed = Cli().list("psi")
    assert ok and listed["challenges"][0]["state"]["status"] == "ended"
    ok, board = Cli().scoring("psi")
    assert ok and len(board["average"]) == 2
    ok, global_board = Cli().scoring()
    assert ok and isinstance(global_board, list) and len(global_board) == 2


def test_the_cli_plays_in_standalone_mode_with_from(settings):
    settings.ARENA_AUTH = "standalone"
    ok, created = Cli(sender="creator").create("psi")
    assert ok
    first, second = created["invites"]
    assert Cli().join(first)[0] and Cli().join(second)[0]

    ok, synced = Cli(sender=first).sync(created["id"])
    assert ok and not synced["messages"][0].get("redacted")
    ok, sent = Cli(sender=first).chat_send(created["id"], "hello")
    assert ok and sent["from"] == first
    ok, answer = Cli(sender=second).send(created["id"], "guess", "100")
    assert ok


def test_the_cli_reads_every_refusal_as_json(settings):
    settings.ARENA_AUTH = "auth"
    cli = Cli()

    for ok, data in (
        cli.metadata("nope"),
        cli.create("nope"),
        cli.join("inv_missing", identity_new()),
        cli.join("inv_missing"),
        cli.sync(""),
        cli.send("not-a-session", "guess", "1"),
        Cli(auth="s_0.deadbeef").send("00000000-0000-0000-0000-000000000000", "guess", "1"),
        cli.chat_send("not-a-session", "hi"),
        cli.scoring("nope"),
    ):
        assert not ok
        assert isinstance(data["error"], str) and data["error"]
    ok, metadata = cli.metadata()
    assert ok and set(metadata) == {
        "psi",
        "millionaire",
        "ultimatum",
        "dining-cryptographers",
        "secret-keeper",
    }
    assert metadata["psi"]["methods"] == [
        {"name": "guess", "description": metadata["psi"]["methods"][0]["description"]}
    ]
