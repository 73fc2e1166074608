"""Rate limits key on the client address, read through TRUSTED_PROXIES only."""

import pytest
from django.test import RequestFactory
from rest_framework.test import APIClient

from core.client_ip import client_ip, trusted_proxy_networks

CONSOLE_LOGIN = "/console/api/login"
WEB_LOGIN = "/web/api/login"
WRONG = {"email": "owner@acme.test", "password": "wrong"}


def _from(peer: str, forwarded: str | None = None) -> APIClient:
    extra = {"REMOTE_ADDR": peer}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    client = APIClient()
    client.defaults.update(extra)
    return client


@pytest.fixture
def three_a_minute(settings):
    settings.LOGIN_RATE_LIMIT = "3/m"


def test_a_spoofed_header_from_an_untrusted_peer_changes_nothing(creator, three_a_minute):
    statuses = [
        _from("198.51.100.7", f"203.0.113.{n}").post(CONSOLE_LOGIN, WRONG, format="json")
        for n in range(4)
    ]

    assert [response.status_code for response in statuses] == [401, 401, 401, 429]
    assert statuses[-1].json()["error"]["code"] == "rate_limited"


def test_a_trusted_proxys_header_names_the_client(creator, three_a_minute, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    for _ in range(3):
        _from("10.0.0.5", "203.0.113.1").post(CONSOLE_LOGIN, WRONG, format="json")

    limited = _from("10.0.0.5", "203.0.113.1").post(CONSOLE_LOGIN, WRONG, format="json")
    other_client = _from("10.0.0.5", "203.0.113.2").post(CONSOLE_LOGIN, WRONG, format="json")

    assert limited.status_code == 429
    assert other_client.status_code == 401


def test_entries_left_of_the_first_untrusted_hop_are_ignored(creator, three_a_minute, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.5"]
    statuses = [
        _from("10.0.0.5", f"192.0.2.{n}, 203.0.113.1")
        .post(CONSOLE_LOGIN, WRONG, format="json")
        .status_code
        for n in range(4)
    ]

    assert statuses == [401, 401, 401, 429]


def test_allauths_limits_on_the_web_login_read_the_same_address(player, settings):
    settings.ACCOUNT_RATE_LIMITS = {"login": "2/m/ip"}
    body = {"email": "player@example.com", "password": "correct-horse-9"}
    statuses = [
        _from("198.51.100.7", f"203.0.113.{n}").post(WEB_LOGIN, body, format="json").status_code
        for n in range(3)
    ]

    assert statuses == [200, 200, 429]

    settings.TRUSTED_PROXIES = ["198.51.100.0/24"]
    assert (
        _from("198.51.100.7", "203.0.113.99").post(WEB_LOGIN, body, format="json").status_code
        == 200
    )


@pytest.mark.parametrize(
    "trusted,peer,forwarded,expected",
    [
        ([], "198.51.100.7", "203.0.113.1", "198.51.100.7"),
        (["10.0.0.0/8"], "10.1.2.3", "203.0.113.1, 10.9.9.9", "203.0.113.1"),
        (["10.0.0.0/8"], "10.1.2.3", "", "10.1.2.3"),
        (["10.0.0.0/8"], "10.1.2.3", "not-an-ip", "10.1.2.3"),
        (["10.0.0.0/8"], "10.1.2.3", "[2001:db8::1]:443", "2001:db8::1"),
        (["2001:db8:1::/48"], "2001:db8:1::2", "192.0.2.1:8080", "192.0.2.1"),
        (["10.0.0.0/8"], "::ffff:10.0.0.1", "203.0.113.1", "203.0.113.1"),
        ([], "", None, "unknown"),
    ],
)
def test_it_reads_the_client_address(settings, trusted, peer, forwarded, expected):
    settings.TRUSTED_PROXIES = trusted
    extra = {"REMOTE_ADDR": peer}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded

    assert client_ip(RequestFactory().get("/", **extra)) == expected


def test_a_bad_trusted_proxy_entry_is_named():
    with pytest.raises(ValueError, match="'10.0.0.300'"):
        trusted_proxy_networks(["10.0.0.0/8", "10.0.0.300"])
