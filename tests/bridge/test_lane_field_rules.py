"""One set of field rules for the bridge (challenges/bridge/payload.py): whatever body the
lane takes, the DRF serializer takes unchanged, and a body the serializer would refuse or
reshape is answered by Django's path — never a 5xx, never an attempt."""

import json

import pytest

from challenges.bridge.api import ChallengeEvaluatorInputSerializer
from challenges.bridge.payload import MASK_VARIABLES_MAX, evaluator_call_as_sent
from challenges.models import ChallengeAttempt
from tests.bridge.conftest import EVALUATOR, post_json, run_id
from tests.bridge.test_lane import call, handed_on, lane, raw_key  # noqa: F401 - fixtures
from tests.factories import make_challenge

BASE = {"challenge_id": "c-1", "output": "o", "user": "dify-1", "workflow_run_id": "run-1"}

CASES = [
    {},
    {"prompt": ""},
    {"prompt": "p" * 100_000},
    {"prompt": "p" * 100_001},
    {"output": "o" * 100_000},
    {"output": "o" * 100_001},
    {"output": "nul \x00 inside"},
    {"output": "lone \ud800 surrogate"},
    {"prompt": "\udfff"},
    {"user": "u" * 255},
    {"user": "u" * 256},
    {"user": " padded "},
    {"user": "account:7"},
    {"user": ""},
    {"user": "\x00"},
    {"challenge_id": "c" * 100},
    {"challenge_id": "c" * 101},
    {"challenge_id": "\u2003c"},
    {"workflow_run_id": "r" * 101},
    {"workflow_run_id": "r\x00"},
    {"tokens_total": 0},
    {"tokens_total": 2**31 - 1},
    {"tokens_total": 2**31},
    {"tokens_total": -1},
    {"tokens_total": True},
    {"elapsed_ms": 1.0},
    {"elapsed_ms": None},
    {"mask_variables": ["a"] * MASK_VARIABLES_MAX},
    {"mask_variables": ["a"] * (MASK_VARIABLES_MAX + 1)},
    {"mask_variables": ["n" * 200]},
    {"mask_variables": ["n" * 201]},
    {"mask_variables": [" a"]},
    {"mask_variables": [""]},
    {"mask_variables": ["a\x00"]},
    {"variables": {"a": 1, "b": None, "c": "x"}},
    {"output": 12},
]


@pytest.mark.parametrize("fields", CASES, ids=[repr(case)[:60] for case in CASES])
def test_the_lane_takes_a_body_only_when_the_serializer_takes_it_as_sent(fields):
    body = {**BASE, **fields}
    taken = evaluator_call_as_sent(body)
    serializer = ChallengeEvaluatorInputSerializer(data=body)
    if taken is None:
        return  # Django's path answers it, whatever the serializer says
    assert serializer.is_valid(), serializer.errors
    data = serializer.validated_data
    assert (data["challenge_id"], data["user"], data["workflow_run_id"]) == (
        taken.challenge_ref,
        taken.user,
        taken.workflow_run_id,
    )
    assert (data["output"], data.get("prompt", "")) == (taken.output, taken.prompt)
    assert data.get("mask_variables", []) == taken.mask_variables
    assert (data.get("tokens_total"), data.get("elapsed_ms")) == (
        taken.tokens_total,
        taken.elapsed_ms,
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "fields",
    [
        {"output": "open sesame \x00"},
        {"output": "open sesame \ud800"},
        {"prompt": "\udc00"},
        {"user": "account:1"},
        {"mask_variables": ["a"] * (MASK_VARIABLES_MAX + 1)},
        {"mask_variables": ["n" * 201]},
    ],
    ids=["nul", "surrogate", "surrogate-prompt", "account", "too-many-masks", "long-mask"],
)
def test_a_body_the_serializer_refuses_is_djangos_400_through_the_lane(lane, workspace, fields):  # noqa: F811
    challenge = make_challenge(workspace=workspace, success_pattern="open sesame")
    # The text goes as JSON escapes, as Dify would send it.
    body = json.dumps(json.loads(call(challenge)) | fields)
    response = handed_on(lane, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in ("invalid", "invalid_json")
    assert not ChallengeAttempt.objects.exists()


@pytest.mark.django_db
def test_an_inline_call_may_not_claim_a_site_account_either(bridge_api):
    response = post_json(
        bridge_api,
        EVALUATOR,
        {
            "success_type": "contains",
            "success_pattern": "x",
            "output": "x",
            "user": "account:3",
            "workflow_run_id": run_id(),
        },
    )
    assert response.status_code == 400
    assert "account:" in response.json()["error"]["fields"]["user"][0]
