import json
import threading

import pytest
from django.db import connection

from challenges.models import BridgeDelivery, ChallengeAttempt, LeaderboardEntry
from challenges.services.bridge_keys import bridge_key_create
from tests.bridge.conftest import EVALUATOR, bearer_client
from tests.conftest import require_service
from tests.factories import make_challenge, make_workspace

DELIVERIES = 50


@pytest.mark.django_db(transaction=True)
def test_it_records_one_attempt_for_fifty_concurrent_deliveries_of_one_run():
    require_service(
        "PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL=postgres://…"
    )
    workspace = make_workspace("Concurrent Co")
    challenge = make_challenge(workspace=workspace, success_pattern="open sesame")
    _, raw_key = bridge_key_create(workspace=workspace)
    payload = json.dumps(
        {
            "challenge_id": str(challenge.id),
            "output": "open sesame",
            "user": "dify-user-7",
            "workflow_run_id": "run-concurrent",
        }
    )
    start = threading.Barrier(DELIVERIES)
    answers: list[tuple[int, dict]] = []

    def deliver() -> None:
        client = bearer_client(raw_key)
        try:
            start.wait()
            response = client.post(EVALUATOR, payload, content_type="text/plain")
            answers.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(DELIVERIES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(answers) == DELIVERIES
    assert {status for status, _ in answers} == {200}
    bodies = {json.dumps(body, sort_keys=True) for _, body in answers}
    assert len(bodies) == 1
    attempt = ChallengeAttempt.objects.get()
    assert json.loads(bodies.pop())["attempt_id"] == str(attempt.id)
    assert BridgeDelivery.objects.get().attempt_id == attempt.id
    assert LeaderboardEntry.objects.count() == 1
