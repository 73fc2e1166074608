"""Both raw lanes answer as Django does, header for header, under production settings.

Each case sends one request twice to one served app (lanes in front of Django): once with
the lanes on, once with `LANES=false`, where Django answers. Django's answer is the
expectation: the lane's must carry the same status, the same headers (security headers,
caching, request id) and the same body, and `lane_counts` says which path answered.
The settings are a production site's: HTTPS only behind a proxy, HSTS with preload, a
report-only CSP beside the enforced one, one allowed host; the cases cover the proxy's
HTTPS, an HTTPS connection, plain HTTP (redirected), a bad Host, an error the lane
answers itself (429), and a board's 200 and 304.
"""

import json

import pytest
from django.core.asgi import get_asgi_application
from django.db import connection

from challenges.board_refresh import board_refreshes_wait
from challenges.bridge.lane import lane_caches_clear
from challenges.services.bridge_keys import bridge_key_create
from config.lanes import lanes_in_front_of
from core.fastlane import lane_counts
from tests.bridge.conftest import EVALUATOR, run_id
from tests.conftest import redis_up, require_service
from tests.factories import make_challenge, record_win
from tests.lane_client import LaneClient

pytestmark = pytest.mark.django_db(transaction=True)

HOST = "phc.example.org"
REQUEST_ID = "parity-check-0001"
EVALUATOR_LANE = "challenge_evaluator_lane"
BOARD_LANE = "board_read_lane"


@pytest.fixture
def production(settings):
    """A production site's security settings, and the served app built after them (as a
    worker builds Django's middleware at its start)."""
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = [HOST]
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_HSTS_PRELOAD = True
    settings.SECURE_REFERRER_POLICY = "same-origin"
    settings.SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {
        "DIRECTIVES": {"default-src": ["'none'"], "report-uri": "/csp-reports"}
    }
    lane_caches_clear()
    client = LaneClient(application=lanes_in_front_of(get_asgi_application()))
    yield client
    client.close()


def both_ways(settings, send, lane: str, *, lane_answers: bool):
    """(the lane's answer, Django's answer) of `send()`; checks which path answered."""
    answered = lane_counts[f"{lane}:answered"]
    handed_on = lane_counts[f"{lane}:handed_on"]
    by_lane = send()
    if lane_answers:
        assert lane_counts[f"{lane}:answered"] == answered + 1, "Django answered, not the lane"
    else:
        assert lane_counts[f"{lane}:handed_on"] == handed_on + 1, "the lane answered"
    settings.LANES = False
    try:
        answered = lane_counts[f"{lane}:answered"]
        by_django = send()
        assert lane_counts[f"{lane}:answered"] == answered
    finally:
        settings.LANES = True
    return by_lane, by_django


def seen(response, *, ignore_in_body=()) -> dict:
    """All a client sees of an answer. Values that differ between any two answers by
    nature are named, not compared: an attempt's id, a Retry-After a second apart."""
    headers = sorted((name.lower(), value) for name, value in response.headers.multi_items())
    body = response.content
    if body and response.headers.get("content-type") == "application/json":
        body = json.loads(body)
        for name in ignore_in_body:
            if name in body:
                body[name] = f"<{name}>"
    retry_after = [value for name, value in headers if name == "retry-after"]
    headers = [(name, value) for name, value in headers if name != "retry-after"]
    return {
        "status": response.status_code,
        "headers": headers,
        "retry-after": [int(value) >= 1 for value in retry_after],
        "body": body,
    }


def assert_same(by_lane, by_django, **options) -> None:
    assert seen(by_lane, **options) == seen(by_django, **options)


# --- the challenge evaluator ---------------------------------------------------------------


@pytest.fixture
def raw_key(workspace):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    return raw


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, success_pattern="open sesame")


def evaluate(client, challenge, raw_key, url: str, **headers):
    body = json.dumps(
        {
            "challenge_id": str(challenge.id),
            "output": "no",
            "user": "parity-player",
            "workflow_run_id": run_id(),
        }
    )
    lines = [("authorization", f"Bearer {raw_key}"), ("x-request-id", REQUEST_ID)]
    lines += list(headers.items())
    return client.post(url, body, content_type="text/plain", header_lines=lines)


EVALUATOR_CASES = {
    # (address, extra header lines, whether the lane answers it)
    "https behind the proxy": (f"http://{HOST}{EVALUATOR}", {"x-forwarded-proto": "https"}, True),
    "an https connection": (f"https://{HOST}{EVALUATOR}", {}, True),
    "plain http is redirected": (f"http://{HOST}{EVALUATOR}", {}, False),
    "the proxy says http": (f"https://{HOST}{EVALUATOR}", {"x-forwarded-proto": "http"}, False),
    "a bad host": (f"https://evil.example.net{EVALUATOR}", {}, False),
}


@pytest.mark.parametrize(
    ("url", "headers", "lane_answers"), EVALUATOR_CASES.values(), ids=EVALUATOR_CASES.keys()
)
def test_the_evaluator_lane_answers_as_django_does(
    production, settings, challenge, raw_key, url, headers, lane_answers
):
    evaluate(production, challenge, raw_key, f"https://{HOST}{EVALUATOR}")  # caches warm
    by_lane, by_django = both_ways(
        settings,
        lambda: evaluate(production, challenge, raw_key, url, **headers),
        EVALUATOR_LANE,
        lane_answers=lane_answers,
    )
    assert_same(by_lane, by_django, ignore_in_body=("attempt_id",))
    if lane_answers:
        assert by_lane.status_code == 200
        assert (
            by_lane["strict-transport-security"] == "max-age=31536000; includeSubDomains; preload"
        )
        assert "report-uri /csp-reports" in by_lane["content-security-policy-report-only"]


def test_an_error_the_evaluator_lane_answers_has_djangos_shape_and_headers(
    production, settings, challenge, raw_key
):
    settings.BRIDGE_RATE_LIMIT = "1/d"
    url = f"https://{HOST}{EVALUATOR}"
    assert evaluate(production, challenge, raw_key, url).status_code == 200
    by_lane, by_django = both_ways(
        settings,
        lambda: evaluate(production, challenge, raw_key, url),
        EVALUATOR_LANE,
        lane_answers=True,
    )
    assert by_lane.status_code == 429
    assert by_lane.json()["error"]["code"] == "rate_limited"
    assert_same(by_lane, by_django)


def test_without_a_given_request_id_both_paths_name_the_request(
    production, settings, challenge, raw_key
):
    def send():
        lines = [("authorization", f"Bearer {raw_key}"), ("x-forwarded-proto", "https")]
        body = json.dumps(
            {
                "challenge_id": str(challenge.id),
                "output": "no",
                "user": "p",
                "workflow_run_id": run_id(),
            }
        )
        return production.post(
            f"http://{HOST}{EVALUATOR}", body, content_type="text/plain", header_lines=lines
        )

    send()
    by_lane, by_django = both_ways(settings, send, EVALUATOR_LANE, lane_answers=True)
    ids = [by_lane["x-request-id"], by_django["x-request-id"]]
    assert all(len(value) == 32 and int(value, 16) >= 0 for value in ids)
    assert ids[0] != ids[1]


# --- board reads ----------------------------------------------------------------------------


@pytest.fixture
def board(workspace):
    challenge = make_challenge(workspace=workspace, name="Parity Board")
    record_win(challenge, "ada")
    board_refreshes_wait()
    return challenge


def read(client, board, url_host: str, **headers):
    lines = {"x-request-id": REQUEST_ID, **headers}
    extra = {"HTTP_" + name.upper().replace("-", "_"): value for name, value in lines.items()}
    return client.get(f"{url_host}/web/api/challenges/{board.id}/leaderboard", **extra)


BOARD_CASES = {
    "https behind the proxy": (f"http://{HOST}", {"x-forwarded-proto": "https"}, True),
    "an https connection": (f"https://{HOST}", {}, True),
    "plain http is redirected": (f"http://{HOST}", {}, False),
    "a bad host": ("https://evil.example.net", {}, False),
}


@pytest.mark.parametrize(
    ("url_host", "headers", "lane_answers"), BOARD_CASES.values(), ids=BOARD_CASES.keys()
)
def test_the_board_lane_answers_as_django_does(
    production, settings, board, url_host, headers, lane_answers
):
    read(production, board, f"https://{HOST}")  # the cache filled, if it was not
    by_lane, by_django = both_ways(
        settings,
        lambda: read(production, board, url_host, **headers),
        BOARD_LANE,
        lane_answers=lane_answers,
    )
    assert_same(by_lane, by_django)
    if lane_answers:
        assert by_lane.status_code == 200
        assert by_lane["cache-control"] == "public, max-age=1"
        assert by_lane["strict-transport-security"]


def test_the_board_lane_answers_a_conditional_read_as_django_does(production, settings, board):
    etag = read(production, board, f"https://{HOST}")["etag"]
    for condition in ({"if-none-match": etag}, {"if-none-match": f'W/{etag}, "other"'}):
        by_lane, by_django = both_ways(
            settings,
            lambda condition=condition: read(production, board, f"https://{HOST}", **condition),
            BOARD_LANE,
            lane_answers=True,
        )
        assert by_lane.status_code == 304 and by_lane.content == b""
        assert_same(by_lane, by_django)
    # A failed If-Match is rare: the lane leaves it to Django (412).
    refused, by_django = both_ways(
        settings,
        lambda: read(production, board, f"https://{HOST}", **{"if-match": '"other"'}),
        BOARD_LANE,
        lane_answers=False,
    )
    assert refused.status_code == 412
    assert_same(refused, by_django)
