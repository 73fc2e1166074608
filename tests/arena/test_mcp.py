"""MCP as SpecArena serves it (SPEC §5 Arena), through a real uvicorn and the MCP SDK's own
client (Streamable HTTP + ClientSession): two players play psi over /api/arena/mcp and
/api/chat/mcp, in standalone mode (`from` is identity) and in auth mode (Ed25519-signed
joins, then the session key decides and `from` is ignored). Every tool answers what the
REST call it stands for answers, errors included, which the tests check against REST."""

import asyncio
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
import httpx2
import pytest
from django.db import connection
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from tests.arena.conftest import Keypair, now_ms
from tests.conftest import redis_up, require_service, subprocess_database_url
from tests.servers import uvicorn_process, uvicorn_server
from tests.test_sigterm_shutdown import _readme_uvicorn_options

pytestmark = pytest.mark.django_db(transaction=True)

ARENA_TOOLS = ["challenge_join", "challenge_message", "challenge_sync"]
CHAT_TOOLS = ["send_chat", "sync"]
EXIT_SECONDS = 10


def _env(mode: str) -> dict[str, str]:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    return {**os.environ, "DATABASE_URL": subprocess_database_url(), "ARENA_AUTH": mode}


@pytest.fixture
def standalone() -> Iterator[str]:
    with uvicorn_server(env=_env("standalone")) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def auth() -> Iterator[str]:
    with uvicorn_server(env=_env("auth")) as port:
        yield f"http://127.0.0.1:{port}"


@asynccontextmanager
async def mcp(url: str, *, key: str = "") -> AsyncIterator[ClientSession]:
    """An initialized SDK client session on `url`, sending `key` as a Bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=30))
        read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, arguments: dict) -> tuple[bool, dict]:
    """(whether the tool answered an error, the JSON of its text)."""
    result = await session.call_tool(tool, arguments)
    [content] = result.content
    return result.is_error, json.loads(content.text)


def rest(base: str, method: str, path: str, **kwargs) -> httpx.Response:
    return httpx.request(method, base + path, timeout=30, **kwargs)


def new_psi(base: str) -> dict:
    response = rest(base, "POST", "/api/challenges/psi")
    assert response.status_code == 200, response.text
    return response.json()


def private_set(messages: list[dict], invite: str) -> set[int]:
    [told] = [m for m in messages if m["to"] == invite and "private set" in m["content"]]
    return {int(number) for number in re.findall(r"\d+", told["content"])}


def ended_session(base: str, challenge_id: str) -> dict:
    listed = rest(base, "GET", "/api/challenges/psi", params={"status": "ended"}).json()
    [session] = [s for s in listed["challenges"] if s["id"] == challenge_id]
    return session


# --- standalone: `from` is identity ------------------------------------------------------


def test_it_serves_the_tools_at_specarenas_paths_and_under_v1(standalone):
    async def scenario() -> dict[str, list[str]]:
        listed = {}
        for path in ("/api/arena/mcp", "/api/chat/mcp", "/api/v1/arena/mcp", "/api/v1/chat/mcp"):
            async with mcp(standalone + path) as session:
                listed[path] = [tool.name for tool in (await session.list_tools()).tools]
        # The SDK's high-level client speaks the 2026 protocol (no handshake) when it can.
        async with Client(standalone + "/api/arena/mcp") as modern:
            assert modern.protocol_version in MODERN_PROTOCOL_VERSIONS
            listed["modern"] = [tool.name for tool in (await modern.list_tools()).tools]
        return listed

    assert asyncio.run(scenario()) == {
        "/api/arena/mcp": ARENA_TOOLS,
        "/api/chat/mcp": CHAT_TOOLS,
        "/api/v1/arena/mcp": ARENA_TOOLS,
        "/api/v1/chat/mcp": CHAT_TOOLS,
        "modern": ARENA_TOOLS,
    }


def test_it_plays_a_whole_psi_game_with_two_clients_in_standalone_mode(standalone):
    created = new_psi(standalone)
    game, (first, second) = created["id"], created["invites"]
    arena, chat = standalone + "/api/arena/mcp", standalone + "/api/chat/mcp"

    async def player(invite: str, other: str, joined: asyncio.Barrier, chatted: asyncio.Barrier):
        async with mcp(arena) as operator, mcp(chat) as players:
            error, answer = await call(
                operator, "challenge_join", {"invite": invite, "userId": f"user-{invite}"}
            )
            assert not error
            assert answer == {
                "ChallengeID": game,
                "ChallengeInfo": rest(standalone, "GET", "/api/metadata/psi").json(),
            }
            await joined.wait()

            error, synced = await call(
                operator, "challenge_sync", {"channel": game, "from": invite, "index": 0}
            )
            assert not error and synced["count"] == len(synced["messages"]) >= 2
            mine = private_set(synced["messages"], invite)
            [hidden] = [m for m in synced["messages"] if m["to"] == other]
            assert hidden["redacted"] is True and hidden["content"] == ""

            error, sent = await call(
                players,
                "send_chat",
                {"channel": game, "from": invite, "to": None, "content": " ".join(map(str, mine))},
            )
            assert not error
            assert sent == {"index": sent["index"], "channel": game, "from": invite, "to": None}
            await chatted.wait()

            error, said = await call(players, "sync", {"channel": game, "from": invite, "index": 0})
            assert not error and said["count"] == 2
            [theirs] = [m for m in said["messages"] if m["from"] == other]
            common = mine & {int(n) for n in theirs["content"].split()}
            assert len(common) == 3

            error, answer = await call(
                operator,
                "challenge_message",
                {
                    "challengeId": game,
                    "from": invite,
                    "messageType": "guess",
                    "content": ", ".join(map(str, sorted(common))),
                },
            )
            assert (error, answer) == (False, {"ok": "Message sent"})

    async def scenario():
        joined, chatted = asyncio.Barrier(2), asyncio.Barrier(2)
        await asyncio.gather(
            player(first, second, joined, chatted), player(second, first, joined, chatted)
        )

    asyncio.run(scenario())
    session = ended_session(standalone, game)
    assert session["state"]["status"] == "ended"
    assert session["state"]["scores"] == [{"security": 1, "utility": 1}] * 2
    assert session["state"]["playerIdentities"] == {
        first: f"user-{first}",
        second: f"user-{second}",
    }


def test_each_tool_answers_what_its_rest_call_answers(standalone):
    created = new_psi(standalone)
    game, (first, second) = created["id"], created["invites"]
    for invite in (first, second):
        rest(standalone, "POST", "/api/arena/join", json={"invite": invite})
    rest(
        standalone,
        "POST",
        "/api/chat/send",
        json={"channel": game, "from": first, "to": second, "content": "psst"},
    )
    arena, chat = standalone + "/api/arena/mcp", standalone + "/api/chat/mcp"
    calls = [
        # (endpoint, tool, arguments, REST method and path, REST status)
        (arena, "challenge_join", {"invite": first}, "POST", "/api/arena/join", 400),
        (arena, "challenge_join", {"invite": "inv_nope"}, "POST", "/api/arena/join", 400),
        (arena, "challenge_join", {}, "POST", "/api/arena/join", 400),
        (
            arena,
            "challenge_message",
            {
                "challengeId": "nonexistent",
                "from": "nobody",
                "messageType": "guess",
                "content": "1",
            },
            "POST",
            "/api/arena/message",
            400,
        ),
        (
            arena,
            "challenge_message",
            {"challengeId": game, "messageType": "guess", "content": "1"},
            "POST",
            "/api/arena/message",
            400,
        ),
        (
            arena,
            "challenge_sync",
            {"channel": "nonexistent", "from": "x", "index": 0},
            "GET",
            "/api/arena/sync",
            200,
        ),
        (
            arena,
            "challenge_sync",
            {"channel": game, "from": first, "index": -1},
            "GET",
            "/api/arena/sync",
            400,
        ),
        (chat, "sync", {"channel": game, "index": 0}, "GET", "/api/chat/sync", 200),
        (chat, "sync", {"channel": game, "from": second, "index": 0}, "GET", "/api/chat/sync", 200),
        (chat, "send_chat", {"channel": game, "from": first}, "POST", "/api/chat/send", 400),
    ]

    async def scenario() -> list[tuple[bool, dict]]:
        answers = []
        async with mcp(arena) as on_arena, mcp(chat) as on_chat:
            for endpoint, tool, arguments, *_ in calls:
                answers.append(
                    await call(on_arena if endpoint == arena else on_chat, tool, arguments)
                )
        return answers

    answers = asyncio.run(scenario())
    for (_, tool, arguments, method, path, status), (error, answer) in zip(
        calls, answers, strict=True
    ):
        if method == "GET":
            expected = rest(standalone, method, path, params=arguments)
        else:
            expected = rest(standalone, method, path, json=arguments)
        assert expected.status_code == status, (tool, arguments, expected.text)
        assert (error, answer) == (status >= 400, expected.json()), (tool, arguments)
    # What those REST calls are, for the reader: SpecArena's texts.
    assert answers[0][1]["code"] == "INVITE_ALREADY_USED"
    assert answers[3][1]["error"] == "Challenge not found"
    assert answers[4][1]["error"] == "from is required"
    assert answers[5][1] == {"messages": [], "count": 0}
    [dm] = answers[7][1]["messages"]
    assert dm["redacted"] is True and dm["content"] == ""
    assert answers[8][1]["messages"][0]["content"] == "psst"


# --- auth mode: the session key decides --------------------------------------------------


async def signed_join(url: str, invite: str, keys: Keypair) -> tuple[bool, dict]:
    stamp = now_ms()
    async with mcp(url) as anonymous:
        return await call(
            anonymous,
            "challenge_join",
            {
                "invite": invite,
                "publicKey": keys.public_hex,
                "signature": keys.sign(f"arena:v1:join:{invite}:{stamp}"),
                "timestamp": stamp,
            },
        )


def test_it_plays_a_whole_psi_game_with_session_keys_in_auth_mode(auth):
    created = new_psi(auth)
    game, invites = created["id"], created["invites"]
    arena, chat = auth + "/api/arena/mcp", auth + "/api/chat/mcp"
    keypairs = [Keypair(), Keypair()]

    async def scenario() -> None:
        keys = []
        for invite, keypair in zip(invites, keypairs, strict=True):
            error, joined = await signed_join(arena, invite, keypair)
            assert not error and joined["ChallengeID"] == game
            assert re.fullmatch(r"s_\d\.[0-9a-f]{64}", joined["sessionKey"])
            keys.append(joined["sessionKey"])

        sets = []
        for me, (invite, key) in enumerate(zip(invites, keys, strict=True)):
            other = invites[1 - me]
            async with mcp(arena, key=key) as operator, mcp(chat, key=key) as players:
                # `from` names the other player: the key decides, so this is still me.
                error, synced = await call(
                    operator, "challenge_sync", {"channel": game, "from": other, "index": 0}
                )
                assert not error
                sets.append(private_set(synced["messages"], invite))
                [hidden] = [m for m in synced["messages"] if m["to"] == other]
                assert hidden["redacted"] is True

                error, sent = await call(
                    players, "send_chat", {"channel": game, "from": other, "content": "hi"}
                )
                assert not error and sent["from"] == invite

        common = ", ".join(map(str, sorted(sets[0] & sets[1])))
        for invite, key in zip(invites, keys, strict=True):
            async with mcp(arena, key=key) as operator:
                answer = await call(
                    operator,
                    "challenge_message",
                    {
                        "challengeId": game,
                        "from": "anyone",
                        "messageType": "guess",
                        "content": common,
                    },
                )
                assert answer == (False, {"ok": "Message sent"})

    asyncio.run(scenario())
    session = ended_session(auth, game)
    assert session["state"]["scores"] == [{"security": 1, "utility": 1}] * 2
    assert session["state"]["playerIdentities"] == {
        invite: keypair.user_id for invite, keypair in zip(invites, keypairs, strict=True)
    }


def test_it_refuses_a_bad_key_a_bad_signature_and_a_keyless_move_in_auth_mode(auth):
    created = new_psi(auth)
    game, (first, _) = created["id"], created["invites"]
    arena = auth + "/api/arena/mcp"
    forged = "s_0." + "0" * 64
    move = {"challengeId": game, "from": first, "messageType": "guess", "content": "100"}

    async def scenario() -> dict[str, tuple[bool, dict]]:
        seen = {}
        stamp = now_ms()
        async with mcp(arena) as anonymous:
            seen["bad signature"] = await call(
                anonymous,
                "challenge_join",
                {
                    "invite": first,
                    "publicKey": Keypair().public_hex,
                    "signature": Keypair().sign(f"arena:v1:join:{first}:{stamp}"),
                    "timestamp": stamp,
                },
            )
            seen["unsigned join"] = await call(anonymous, "challenge_join", {"invite": first})
            seen["keyless move"] = await call(anonymous, "challenge_message", move)
        async with mcp(arena, key=forged) as impostor:
            seen["forged key, move"] = await call(impostor, "challenge_message", move)
            seen["forged key, sync"] = await call(
                impostor, "challenge_sync", {"channel": game, "index": 0}
            )
        async with mcp(f"{arena}?key={forged}") as impostor:
            seen["forged ?key="] = await call(impostor, "challenge_message", move)
        return seen

    seen = asyncio.run(scenario())
    by_rest = rest(
        auth, "POST", "/api/arena/message", json=move, headers={"Authorization": f"Bearer {forged}"}
    )
    assert by_rest.status_code == 401
    refused = by_rest.json()
    assert refused["error"] == "Authentication required"
    assert {name: (error, body["error"]) for name, (error, body) in seen.items()} == {
        "bad signature": (True, "Invalid signature"),
        "unsigned join": (True, "publicKey, signature, and timestamp are required"),
        "keyless move": (True, "from is required"),
        "forged key, move": (True, "Authentication required"),
        "forged key, sync": (True, "Authentication required"),
        "forged ?key=": (True, "Authentication required"),
    }
    assert seen["forged key, move"] == (True, refused)
    # Nothing was joined: the invite is still free.
    assert rest(auth, "GET", f"/api/invites/{first}").status_code == 200


# --- the transport ---------------------------------------------------------------------


def test_the_endpoint_refuses_what_is_not_mcp_without_a_server_error(standalone):
    url = standalone + "/api/arena/mcp"
    mcp_headers = {"Accept": "application/json, text/event-stream"}
    answers = {
        "broken JSON": rest(
            standalone, "POST", "/api/arena/mcp", content=b'{"a": ', headers=mcp_headers
        ),
        "JSON nested 60,000 deep": rest(
            standalone,
            "POST",
            "/api/arena/mcp",
            content=b"[" * 60_000 + b"]" * 60_000,
            headers=mcp_headers,
        ),
        "not JSON-RPC": rest(
            standalone, "POST", "/api/arena/mcp", json={"a": 1}, headers=mcp_headers
        ),
        "GET": httpx.get(url, headers={"Accept": "text/event-stream"}, timeout=30),
        "DELETE": httpx.delete(url, timeout=30),
        "too large": rest(
            standalone, "POST", "/api/arena/mcp", content=b" " * (1024 * 1024), headers=mcp_headers
        ),
    }
    statuses = {name: response.status_code for name, response in answers.items()}
    assert statuses == {
        "broken JSON": 400,
        "JSON nested 60,000 deep": 400,
        "not JSON-RPC": 400,
        # Stateless: no stream to open, no session to end.
        "GET": 405,
        "DELETE": 405,
        "too large": 413,
    }
    # A host Django refuses is refused here too, with Django's answer.
    evil = rest(
        standalone,
        "POST",
        "/api/arena/mcp",
        json={},
        headers={"Host": "evil.example", **mcp_headers},
    )
    by_rest = rest(standalone, "POST", "/api/arena/join", json={}, headers={"Host": "evil.example"})
    assert (evil.status_code, evil.json()) == (400, by_rest.json())
    # Paths beside the endpoints stay Django's.
    assert rest(standalone, "POST", "/api/arena/mcp/").json() == {
        "error": "Not found",
        "code": "NOT_FOUND",
    }


def test_the_lifespan_runs_the_endpoints_and_sigterm_still_stops_the_server_quickly():
    """The README's production command (lifespan on): MCP answers, and SIGTERM ends the
    process within 10 s."""
    with uvicorn_process(env=_env("standalone"), options=_readme_uvicorn_options()) as (
        process,
        port,
    ):
        base = f"http://127.0.0.1:{port}"
        created = new_psi(base)

        async def scenario() -> tuple[bool, dict]:
            async with mcp(base + "/api/arena/mcp") as session:
                return await call(session, "challenge_join", {"invite": created["invites"][0]})

        error, joined = asyncio.run(scenario())
        assert not error and joined["ChallengeID"] == created["id"]
        signalled = time.monotonic()
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail("uvicorn still running 10 s after SIGTERM")
        assert time.monotonic() - signalled < EXIT_SECONDS


def test_the_lifespan_protocol_starts_and_stops_the_endpoints_in_bounded_time():
    """What the ASGI server sees of the lifespan: startup and shutdown both complete, the
    shutdown within STOP_SECONDS."""
    from django.core.asgi import get_asgi_application

    from config.mcp import STOP_SECONDS, McpInFrontOf

    django_app = get_asgi_application()
    mount = McpInFrontOf(django_app, rest_app=django_app)

    async def scenario() -> tuple[list[dict], float]:
        inbox: asyncio.Queue = asyncio.Queue()
        sent: list[dict] = []

        async def send(message: dict) -> None:
            sent.append(message)

        serving = asyncio.create_task(mount({"type": "lifespan"}, inbox.get, send))
        await inbox.put({"type": "lifespan.startup"})
        while not sent:
            await asyncio.sleep(0.01)
        stopping = time.monotonic()
        await inbox.put({"type": "lifespan.shutdown"})
        await asyncio.wait_for(serving, STOP_SECONDS + 1)
        return sent, time.monotonic() - stopping

    sent, stop_seconds = asyncio.run(scenario())
    assert sent == [{"type": "lifespan.startup.complete"}, {"type": "lifespan.shutdown.complete"}]
    assert stop_seconds < STOP_SECONDS
