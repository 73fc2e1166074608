"""Concurrent links and recordings keep one board row per player and challenge (PostgreSQL)."""

import json
import threading

import pytest
from django.db import connection

from challenges.models import LeaderboardEntry
from challenges.services.bridge_keys import bridge_key_create
from players.link_codes import link_code_create
from tests.bridge.conftest import EVALUATOR, bearer_client
from tests.conftest import require_service
from tests.factories import make_challenge, make_player, make_workspace

RUNS = 8


def _together(calls) -> list[tuple[int, dict]]:
    start = threading.Barrier(len(calls))
    answers: list[tuple[int, dict]] = []

    def call(client, body) -> None:
        try:
            start.wait()
            response = client.post(EVALUATOR, json.dumps(body), content_type="text/plain")
            answers.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=call, args=pair) for pair in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.mark.django_db(transaction=True)
def test_links_and_recordings_at_once_leave_one_row_per_player():
    require_service(
        "PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL=postgres://…"
    )
    workspace = make_workspace("Race Co")
    challenge = make_challenge(workspace=workspace, scoring_strategy="fewest_tokens")
    _, raw = bridge_key_create(workspace=workspace)
    player = make_player("racer@example.com")
    users = [f"dify-{n}" for n in range(RUNS)]
    codes = [link_code_create(account=player, workspace=workspace).code for _ in users]

    def body(user, tokens, **fields):
        return {
            "challenge_id": str(challenge.id),
            "output": "open sesame",
            "user": user,
            "workflow_run_id": f"{user}-{tokens}-{len(fields)}",
            "tokens_total": tokens,
            **fields,
        }

    # Each Dify user first has its own row; then every user links (with its own code)
    # while also recording a new attempt, all at once.
    for n, user in enumerate(users):
        _together([(bearer_client(raw), body(user, 100 + n))])
    calls = []
    for n, (user, code) in enumerate(zip(users, codes, strict=True)):
        calls.append((bearer_client(raw), body(user, 50 + n, link_code=code)))
        calls.append((bearer_client(raw), body(user, 10 + n)))
    answers = _together(calls)

    assert {status for status, _ in answers} == {200}
    rows = list(LeaderboardEntry.objects.filter(challenge=challenge))
    assert len(rows) == 1
    assert rows[0].end_user.account == player
    assert rows[0].tokens_total == 10
