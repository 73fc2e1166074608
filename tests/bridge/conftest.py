import json
import time
import uuid

import pytest
from rest_framework.test import APIClient

from challenges.bridge.signatures import sign
from challenges.services.bridge_keys import bridge_key_create
from tests.factories import make_challenge

EVALUATOR = "/bridge/dify/challenge-evaluator"
JUDGE = "/bridge/dify/judging-llm"


def bearer_client(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


def post_json(client: APIClient, url: str, body: dict, **extra):
    return client.post(url, json.dumps(body), content_type="application/json", **extra)


def post_raw_text(client: APIClient, url: str, text: str, **extra):
    """What Dify's HTTP Request node sends in raw-text mode."""
    return client.post(url, text.encode(), content_type="text/plain", **extra)


def signed_headers(raw_key: str, body: bytes, *, msg_id=None, timestamp=None) -> dict:
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    timestamp = int(time.time()) if timestamp is None else timestamp
    return {
        "HTTP_WEBHOOK_ID": msg_id,
        "HTTP_WEBHOOK_TIMESTAMP": str(timestamp),
        "HTTP_WEBHOOK_SIGNATURE": sign(
            raw_key=raw_key, msg_id=msg_id, timestamp=timestamp, body=body
        ),
    }


def run_id() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def bridge_key(workspace):
    key, raw = bridge_key_create(workspace=workspace, name="dify prod")
    return raw


@pytest.fixture
def bridge_api(bridge_key):
    return bearer_client(bridge_key)


@pytest.fixture
def challenge(workspace):
    return make_challenge(
        workspace=workspace,
        name="Leaky Bot",
        success_type="contains",
        success_pattern="open sesame",
    )
