"""The egress guard: a creator's Dify base_url never reaches an internal address.

Refused at save (console API 400, admin form error) and again when the connection is
made, so DNS rebinding, a redirect or a URL stored before the guard cannot reach loopback,
link-local or private services either. EGRESS_ALLOW_HOSTS lets an operator's own server in.
"""

import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from challenges.models import Challenge, ChallengeAttempt, LeaderboardEntry
from challenges.services.secrets import secret_create
from judging.targets import TargetConfig, TargetError, complete_async
from tests.conftest import client_for
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

CONSOLE = "/console/api/challenges"
ADMIN_ADD = "/admin/challenges/challenge/add/"
DIFY_KEY = "app-TOP-SECRET-DIFY-KEY"


class FakeDify:
    """A real HTTP server on 127.0.0.1 that answers like Dify, or with a redirect."""

    def __init__(self, *, redirect_to: str | None = None):
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization")})
                if redirect_to:
                    self.send_response(307)
                    self.send_header("Location", redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = json.dumps(
                    {"data": {"status": "succeeded", "outputs": {"text": "internal reply"}}}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_dify():
    servers: list[FakeDify] = []

    def start(**kwargs) -> FakeDify:
        server = FakeDify(**kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture(autouse=True)
def no_allowlist(settings):
    settings.EGRESS_ALLOW_HOSTS = []


@pytest.fixture
def dify_key(workspace):
    secret_create(workspace=workspace, name="dify-key", value=DIFY_KEY)


@pytest.fixture
def player_api(player):
    return client_for(player)


def dify_challenge(workspace, base_url: str) -> Challenge:
    return make_challenge(
        workspace=workspace,
        target="dify",
        target_config={"base_url": base_url, "app_key_secret": "dify-key"},
    )


def play(player_api, challenge):
    return player_api.post(
        f"/web/api/challenges/{challenge.id}/attempts", {"prompt": "hi"}, format="json"
    )


def assert_refused_at_call_time(response, caplog):
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "target_unavailable"
    assert "internal reply" not in response.content.decode()
    assert not ChallengeAttempt.objects.exists()
    assert not LeaderboardEntry.objects.exists()
    assert "egress guard" in caplog.text
    assert DIFY_KEY not in caplog.text


REFUSED_URLS = [
    "http://127.0.0.1:18555/internal/admin",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]:8000/",
    "http://[::ffff:127.0.0.1]/",
    "http://0.0.0.0:6379/",
    "http://10.0.0.5/",
    "http://192.168.1.1/",
    "http://[fe80::1]/",
    "http://[2002:7f00:1::]/",
    "http://2130706433/",
    "http://localhost:5432/",
    "file:///etc/passwd",
    "gopher://dify.example.com/",
    "https://api.dify.ai/v1?x=1#",
    "https://api.dify.ai/internal#",
    "https://user:pass@api.dify.ai/",
]


@pytest.mark.parametrize("base_url", REFUSED_URLS)
def test_it_refuses_an_internal_or_malformed_base_url_on_the_console_api(
    creator_api, dify_key, base_url
):
    response = creator_api.post(
        CONSOLE,
        {
            "name": "Internal",
            "success_type": "contains",
            "success_pattern": "x",
            "target": "dify",
            "target_config": {"base_url": base_url, "app_key_secret": "dify-key"},
        },
        format="json",
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "base_url" in error["fields"]["target_config"][0]
    assert not Challenge.objects.exists()


def test_it_explains_which_address_is_refused(creator_api, dify_key):
    response = creator_api.post(
        CONSOLE,
        {
            "name": "Metadata",
            "success_type": "contains",
            "success_pattern": "x",
            "target": "dify",
            "target_config": {"base_url": "http://169.254.169.254", "app_key_secret": "k"},
        },
        format="json",
    )

    message = response.json()["error"]["fields"]["target_config"][0]
    assert "169.254.169.254 is a link-local address" in message
    assert "EGRESS_ALLOW_HOSTS" in message


def test_it_refuses_an_internal_base_url_in_the_admin_with_a_form_error(creator, workspace):
    from tests.challenges.test_admin_challenges import form_data

    client = Client()
    client.force_login(creator)
    response = client.post(
        ADMIN_ADD,
        form_data(
            workspace,
            target="dify",
            target_config=json.dumps({"base_url": "http://127.0.0.1:6379/"}),
        ),
    )

    assert response.status_code == 200
    assert "127.0.0.1 is a loopback address" in response.content.decode()
    assert not Challenge.objects.exists()


def test_it_lets_an_allowlisted_dify_be_reached_with_the_path_built_under_its_base(
    settings, fake_dify, dify_key, workspace, player_api
):
    dify = fake_dify()
    settings.EGRESS_ALLOW_HOSTS = [f"127.0.0.1:{dify.port}"]
    challenge = dify_challenge(workspace, f"http://127.0.0.1:{dify.port}/dify")

    response = play(player_api, challenge)

    assert response.status_code == 201, response.json()
    assert response.json()["response"] == "internal reply"
    assert dify.requests == [{"path": "/dify/v1/workflows/run", "auth": f"Bearer {DIFY_KEY}"}]


def test_it_allows_a_host_name_listed_without_a_port(settings, fake_dify, dify_key, workspace):
    dify = fake_dify()
    settings.EGRESS_ALLOW_HOSTS = ["LOCALHOST"]

    dify_challenge(workspace, f"http://localhost:{dify.port}")

    assert Challenge.objects.count() == 1


def test_it_refuses_at_connect_time_a_name_that_resolves_to_loopback(
    settings, fake_dify, dify_key, workspace, player_api, caplog
):
    # Saved while the operator allowed it; the allowlist is gone when the player plays,
    # and "localhost" is only known to be loopback by resolving it when connecting.
    dify = fake_dify()
    settings.EGRESS_ALLOW_HOSTS = [f"localhost:{dify.port}"]
    challenge = dify_challenge(workspace, f"http://localhost:{dify.port}")
    settings.EGRESS_ALLOW_HOSTS = []

    with caplog.at_level(logging.WARNING):
        response = play(player_api, challenge)

    assert_refused_at_call_time(response, caplog)
    assert "127.0.0.1 is a loopback address" in caplog.text
    assert dify.requests == []


def test_it_refuses_a_name_rebound_to_loopback_after_it_was_saved(
    monkeypatch, fake_dify, dify_key, workspace, player_api, caplog
):
    dify = fake_dify()
    real_getaddrinfo = socket.getaddrinfo
    answers = iter(["93.184.215.14"])

    def rebinding_dns(host, port, *args, **kwargs):
        if host != "dify.rebind.test":
            return real_getaddrinfo(host, port, *args, **kwargs)
        address = next(answers, "127.0.0.1")  # public at save, loopback ever after
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_dns)
    challenge = dify_challenge(workspace, f"http://dify.rebind.test:{dify.port}")

    with caplog.at_level(logging.WARNING):
        response = play(player_api, challenge)

    assert_refused_at_call_time(response, caplog)
    assert dify.requests == []


def test_it_does_not_follow_a_redirect_to_loopback(
    settings, fake_dify, dify_key, workspace, player_api, caplog
):
    internal = fake_dify()
    allowed = fake_dify(redirect_to=f"http://127.0.0.1:{internal.port}/internal/admin")
    settings.EGRESS_ALLOW_HOSTS = [f"127.0.0.1:{allowed.port}"]
    challenge = dify_challenge(workspace, f"http://127.0.0.1:{allowed.port}")

    with caplog.at_level(logging.WARNING):
        response = play(player_api, challenge)

    assert response.status_code == 502
    assert response.json()["error"]["code"] == "target_unavailable"
    assert len(allowed.requests) == 1
    assert internal.requests == []
    assert not ChallengeAttempt.objects.exists()
    assert "redirect" in caplog.text
    assert DIFY_KEY not in caplog.text


@pytest.mark.parametrize(
    "stored_url",
    ["http://127.0.0.1:{port}/internal?x=1#", "http://169.254.169.254/", "ftp://127.0.0.1/"],
)
def test_it_refuses_at_call_time_a_url_stored_before_the_guard(
    fake_dify, dify_key, workspace, player_api, caplog, stored_url
):
    dify = fake_dify()
    challenge = make_challenge(workspace=workspace)
    Challenge.objects.filter(id=challenge.id).update(
        target="dify",
        target_config={
            "base_url": stored_url.format(port=dify.port),
            "app_key_secret": "dify-key",
        },
    )

    with caplog.at_level(logging.WARNING):
        response = play(player_api, challenge)

    assert_refused_at_call_time(response, caplog)
    assert dify.requests == []


def test_it_never_connects_to_an_unlisted_loopback_port_even_through_complete(fake_dify):
    dify = fake_dify()
    config = TargetConfig(
        provider="dify", base_url=f"http://localhost:{dify.port}", api_key=DIFY_KEY
    )

    with pytest.raises(TargetError, match="egress guard"):
        async_to_sync(complete_async)(system_prompt="", prompt="hi", user="u", config=config)
    assert dify.requests == []
