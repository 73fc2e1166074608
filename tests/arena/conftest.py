"""Scripted arena players that speak the HTTP API the way SpecArena's CLI does."""

import hashlib
import json
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.test import Client

from redblue.models import ArenaSession


def now_ms() -> int:
    return int(time.time() * 1000)


class Keypair:
    def __init__(self) -> None:
        self.private = Ed25519PrivateKey.generate()
        self.public_hex = (
            self.private.public_key()
            .public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
            .hex()
        )
        self.user_id = hashlib.sha256(self.public_hex.encode()).hexdigest()

    def sign(self, message: str) -> str:
        return self.private.sign(message.encode()).hex()


class Agent:
    """One player in auth mode: an Ed25519 key, then the session key the join returns."""

    def __init__(self, client: Client | None = None, prefix: str = "/api/v1") -> None:
        self.client = client or Client()
        self.prefix = prefix
        self.keys = Keypair()
        self.session_key = ""
        self.challenge_id = ""
        self.invite = ""

    def post(self, path: str, body: dict | None = None, **headers):
        return self.client.post(
            self.prefix + path,
            data=json.dumps(body) if body is not None else "",
            content_type="application/json",
            headers=self._auth(headers),
        )

    def get(self, path: str, params: dict | None = None, **headers):
        return self.client.get(self.prefix + path, params or {}, headers=self._auth(headers))

    def _auth(self, headers: dict) -> dict:
        if self.session_key and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {self.session_key}"
        return headers

    def join_body(self, invite: str, timestamp: int | None = None) -> dict:
        timestamp = now_ms() if timestamp is None else timestamp
        return {
            "invite": invite,
            "publicKey": self.keys.public_hex,
            "signature": self.keys.sign(f"arena:v1:join:{invite}:{timestamp}"),
            "timestamp": timestamp,
        }

    def join(self, invite: str):
        response = self.post("/arena/join", self.join_body(invite))
        assert response.status_code == 200, response.content
        data = response.json()
        self.session_key = data["sessionKey"]
        self.challenge_id = data["ChallengeID"]
        self.invite = invite
        return data

    def send(self, method: str, content: str):
        return self.post(
            "/arena/message",
            {"challengeId": self.challenge_id, "messageType": method, "content": content},
        )

    def sync(self, index: int = 0) -> list[dict]:
        response = self.get("/arena/sync", {"channel": self.challenge_id, "index": str(index)})
        assert response.status_code == 200, response.content
        return response.json()["messages"]

    def chat(self, content: str, to: str | None = None):
        body = {"channel": self.challenge_id, "content": content}
        if to:
            body["to"] = to
        return self.post("/chat/send", body)

    def chat_sync(self, index: int = 0) -> list[dict]:
        response = self.get("/chat/sync", {"channel": self.challenge_id, "index": str(index)})
        assert response.status_code == 200, response.content
        return response.json()["messages"]


def create_session(client: Client, type_name: str, prefix: str = "/api/v1") -> dict:
    response = client.post(f"{prefix}/challenges/{type_name}")
    assert response.status_code == 200, response.content
    return response.json()


def game_state(challenge_id: str) -> dict:
    return ArenaSession.objects.get(pk=challenge_id).game_state


@pytest.fixture
def arena_auth(settings):
    settings.ARENA_AUTH = "auth"
    return settings


@pytest.fixture
def arena_standalone(settings):
    settings.ARENA_AUTH = "standalone"
    return settings


def start_game(type_name: str) -> tuple[dict, list[Agent]]:
    """Create a session of `type_name` and join every invite with a fresh signed agent."""
    session = create_session(Client(), type_name)
    agents = [Agent() for _ in session["invites"]]
    for agent, invite in zip(agents, session["invites"], strict=True):
        agent.join(invite)
    return session, agents


def final_state(challenge_id: str) -> dict:
    session = ArenaSession.objects.get(pk=challenge_id)
    return {
        "status": session.status,
        "scores": session.scores,
        "attributions": session.attributions,
    }
