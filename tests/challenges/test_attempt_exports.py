"""Creators export attempts as CSV or JSON Lines, by `?format=` or by `Accept`, with the
kept prompts and replies (masked) in their own columns."""

import csv
import io
import json

import pytest
from django.test import Client

from challenges.services.attempts import attempt_record
from challenges.services.challenges import challenge_update
from challenges.services.secrets import secret_create
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db

SECRET = "SWORDFISH"


@pytest.fixture
def challenge(workspace):
    secret_create(workspace=workspace, name="vault", value=SECRET)
    challenge = make_challenge(
        workspace=workspace, slug="vault", secret_ref="vault", success_pattern="{{secret}}"
    )
    challenge_update(challenge=challenge, user=None, keep_failed_prompts=True)
    alice = make_end_user(workspace=workspace, external_id="alice")
    attempt_record(
        challenge=challenge,
        end_user=alice,
        verdict=Verdict(False, "no"),
        prompt=f"Is it {SECRET}?",
        response=f"I cannot say {SECRET}.",
    )
    return challenge


def _url(challenge, query: str = "") -> str:
    return f"/console/api/challenges/{challenge.id}/attempts{query}"


def _body(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_it_exports_csv_when_asked_by_the_accept_header(creator_api, challenge):
    response = creator_api.get(_url(challenge), HTTP_ACCEPT="text/csv")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(_body(response))))
    assert rows[0]["prompt"] == "Is it [redacted]?"
    assert rows[0]["response"] == "I cannot say [redacted]."


def test_it_exports_csv_with_prompt_columns_by_the_format_parameter(creator_api, challenge):
    response = creator_api.get(_url(challenge, "?format=csv"))

    body = _body(response)
    assert "prompt,response" in body.splitlines()[0]
    assert SECRET not in body


@pytest.mark.parametrize(
    ("query", "accept"),
    [("?format=jsonl", "application/json"), ("", "application/x-ndjson")],
)
def test_it_exports_json_lines(creator_api, challenge, query, accept):
    response = creator_api.get(_url(challenge, query), HTTP_ACCEPT=accept)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in _body(response).splitlines()]
    assert len(lines) == 1
    assert lines[0]["prompt"] == "Is it [redacted]?"
    assert lines[0]["succeeded"] is False
    assert lines[0]["end_user_external_id"] == "alice"


def test_it_answers_errors_as_json_even_when_csv_was_asked(creator_api, challenge):
    response = creator_api.get(_url(challenge, "?succeeded=maybe"), HTTP_ACCEPT="text/csv")

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"]["fields"]["succeeded"]


def test_it_still_lists_json_by_default(creator_api, challenge):
    body = creator_api.get(_url(challenge)).json()

    assert body["count"] == 1
    assert body["results"][0]["prompt"] == "Is it [redacted]?"


def test_it_shows_kept_failed_prompts_masked_in_the_admin(creator, challenge):
    client = Client()
    client.force_login(creator)

    listing = client.get("/admin/challenges/challengeattempt/").content.decode()

    assert "Is it [redacted]?" in listing
    assert SECRET not in listing
    export = client.get("/admin/challenges/challengeattempt/export/")
    rows = list(csv.DictReader(io.StringIO(_body(export))))
    assert rows[0]["response"] == "I cannot say [redacted]."
