"""Two scripted agents play psi reading only the Server-Sent Events stream and the sync
endpoints: no polling loop, no peeking at the database."""

import asyncio
import json
import re

import pytest
from django.test import AsyncClient, Client

from tests.arena.conftest import Keypair, create_session, now_ms

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("arena_auth")]


class EventStream:
    def __init__(self, response) -> None:
        self.chunks = response.streaming_content.__aiter__()
        self.buffer = ""

    async def next(self) -> dict | str:
        while "\n\n" not in self.buffer:
            chunk = await self.chunks.__anext__()
            self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        frame, self.buffer = self.buffer.split("\n\n", 1)
        if frame.startswith(":"):
            return frame
        assert frame.startswith("data: ")
        return json.loads(frame[len("data: ") :])

    async def until(self, wanted) -> dict:
        while True:
            event = await self.next()
            if isinstance(event, dict) and wanted(event):
                return event


def carried(event: dict) -> list[dict]:
    """The messages an `initial` or `new_message` event carries."""
    if event["type"] == "new_message":
        return [event["message"]]
    return event.get("messages", [])


async def post(client: AsyncClient, path: str, body: dict, key: str = "") -> dict:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = await client.post(
        "/api/v1" + path, json.dumps(body), content_type="application/json", headers=headers
    )
    assert response.status_code == 200, response.content
    return response.json()


async def agent(invite: str, results: dict) -> None:
    client, keys = AsyncClient(), Keypair()
    stamp = now_ms()
    joined = await post(
        client,
        "/arena/join",
        {
            "invite": invite,
            "publicKey": keys.public_hex,
            "signature": keys.sign(f"arena:v1:join:{invite}:{stamp}"),
            "timestamp": stamp,
        },
    )
    game, key = joined["ChallengeID"], joined["sessionKey"]
    operator = EventStream(await client.get(f"/api/v1/chat/ws/challenge_{game}", {"key": key}))
    chat = EventStream(await client.get(f"/api/v1/chat/ws/{game}", {"key": key}))

    told = await operator.until(lambda e: any(m["to"] == invite for m in carried(e)))
    mine_text = next(m["content"] for m in carried(told) if m["to"] == invite)
    mine = {int(n) for n in re.findall(r"\d+", mine_text)}

    await post(
        client, "/chat/send", {"channel": game, "content": " ".join(map(str, sorted(mine)))}, key
    )

    event = await chat.until(lambda e: any(m["from"] != invite for m in carried(e)))
    other = {
        int(n)
        for m in carried(event)
        if m["from"] != invite
        for n in re.findall(r"\d+", m["content"])
    }
    shared = sorted(mine & other)
    await post(
        client,
        "/arena/message",
        {"challengeId": game, "messageType": "guess", "content": " ".join(map(str, shared))},
        key,
    )
    ended = await operator.until(lambda e: e["type"] == "game_ended")
    results[invite] = {"ended": ended["data"], "shared": shared, "user": keys.user_id}
    synced = await client.get("/api/v1/arena/sync", {"channel": game, "index": "0", "key": key})
    results[invite]["last"] = synced.json()["messages"][-1]["content"]


def test_two_agents_play_psi_over_the_event_stream(settings):
    settings.ARENA_SSE_PING_SECONDS = 30
    session = create_session(Client(), "psi")
    results: dict = {}

    async def play() -> None:
        await asyncio.wait_for(
            asyncio.gather(*(agent(invite, results) for invite in session["invites"])), 30
        )

    asyncio.run(play())

    first, second = session["invites"]
    assert len(results[first]["shared"]) == 3
    assert results[first]["shared"] == results[second]["shared"]
    ended = results[first]["ended"]
    assert ended["status"] == "ended"
    assert ended["scores"] == [{"security": 1, "utility": 1}, {"security": 1, "utility": 1}]
    assert ended["playerIdentities"] == {
        first: results[first]["user"],
        second: results[second]["user"],
    }
    assert set(ended["profiles"]) == {results[first]["user"], results[second]["user"]}
    assert results[first]["last"].startswith("Game ended.")


def test_the_stream_pings_and_redacts_for_a_stranger(settings):
    settings.ARENA_SSE_PING_SECONDS = 0.1
    session = create_session(Client(), "psi")
    keys = Keypair()
    stamp = now_ms()
    Client().post(
        "/api/arena/join",
        json.dumps(
            {
                "invite": session["invites"][0],
                "publicKey": keys.public_hex,
                "signature": keys.sign(f"arena:v1:join:{session['invites'][0]}:{stamp}"),
                "timestamp": stamp,
            }
        ),
        content_type="application/json",
    )

    async def watch() -> tuple:
        response = await AsyncClient().get(f"/api/chat/ws/challenge_{session['id']}")
        stream = EventStream(response)
        first = await stream.next()
        ping = await stream.next()
        return response, first, ping

    response, first, ping = asyncio.run(asyncio.wait_for(watch(), 10))

    assert response["Content-Type"] == "text/event-stream"
    assert first["type"] == "initial"
    assert first["messages"][0]["redacted"] is True and first["messages"][0]["content"] == ""
    assert ping == ": ping"


def test_the_stream_refuses_a_forged_key_and_streams_any_other_channel():
    session = create_session(Client(), "psi")
    client = Client()

    assert client.get(f"/api/chat/ws/{session['id']}", {"key": "s_0.abc"}).status_code == 401
    # As SpecArena: a channel that is no session's is a channel of its own, streamed too.
    lobby = client.get("/api/chat/ws/lobby")
    assert lobby.status_code == 200 and lobby["Content-Type"] == "text/event-stream"
    lobby.close()
