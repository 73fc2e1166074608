"""The challenge-evaluator suite again, through the served ASGI app with its raw lane.

Every test of tests/bridge/test_challenge_evaluator.py runs here with `bridge_api`
speaking ASGI to config.asgi.application, so the lane (or Django, where the lane hands a
call on) must give the same answers, rows and limits. Each case also states which path
answered each of its calls (`PATHS`, read from the lane's own `lane_counts`, which costs
a counter increment in production): a change that sends a case down the other path fails
here until the table says so. Needs PostgreSQL and Redis: on anything else the lane
stands aside and these would only test Django twice.
"""

import pytest
from django.db import connection

from core.fastlane import lane_counts
from tests.bridge.test_challenge_evaluator import *  # noqa: F403
from tests.conftest import redis_up, require_service
from tests.lane_client import LaneClient

pytestmark = pytest.mark.django_db(transaction=True)

ANSWERED = "challenge_evaluator_lane:answered"

LANE, DJANGO = "lane", "django"
# Which path answers each call of each case (every parameter of a parametrized one), in
# order. The lane takes a keyed call for a stored rules challenge with a `user`, exactly as
# the serializer would take it; the rest is Django's.
PATHS: dict[str, list[str]] = {
    "test_it_answers_with_the_node_outputs_and_records_the_attempt": [LANE],
    "test_it_records_a_failed_attempt_without_its_text": [LANE],
    # No `user`: answered, nothing recorded — Django's path.
    "test_it_answers_without_recording_when_there_is_no_user": [DJANGO],
    # Inline rules are Django's.
    "test_it_never_records_inline_evaluations": [DJANGO, DJANGO],
    "test_it_refuses_an_invalid_inline_regex": [DJANGO],
    "test_it_answers_a_catastrophic_regex_on_a_long_output": [DJANGO, LANE],
    "test_it_refuses_an_unknown_inline_rule_type": [DJANGO],
    # Bad or refused input, unknown challenges: Django's errors.
    "test_it_needs_a_challenge_or_an_inline_rule": [DJANGO],
    "test_it_needs_a_workflow_run_id": [DJANGO],
    "test_it_hides_challenges_of_other_workspaces": [DJANGO],
    "test_it_refuses_attempts_on_a_closed_challenge": [DJANGO],
    "test_it_explains_how_to_fix_a_broken_body": [DJANGO, DJANGO],
    "test_it_refuses_a_user_that_claims_a_site_account": [DJANGO],
    # The lane records and replays.
    "test_it_replays_the_first_answer_for_a_repeated_run": [LANE, LANE],
    "test_it_redacts_the_secret_from_the_output_and_the_stored_attempt": [LANE],
    "test_it_keeps_masked_variables_out_of_rows_and_logs": [LANE],
    "test_it_takes_tricky_outputs_intact_in_raw_text_mode": [LANE],
    # Its calls carry no `user` (answered, not recorded): Django counts and refuses them.
    "test_it_rate_limits_each_key": [DJANGO, DJANGO, DJANGO],
    # An llm-judge challenge is judged on Django's path.
    "test_it_judges_with_the_llm_when_the_challenge_says_so": [DJANGO],
}


class RecordingLaneClient(LaneClient):
    """A LaneClient that notes which path answered each call."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def _noted(self, send):
        answered = lane_counts[ANSWERED]
        response = send()
        self.paths.append(LANE if lane_counts[ANSWERED] > answered else DJANGO)
        return response

    def post(self, *args, **kwargs):
        return self._noted(lambda: super(RecordingLaneClient, self).post(*args, **kwargs))

    def get(self, *args, **kwargs):
        return self._noted(lambda: super(RecordingLaneClient, self).get(*args, **kwargs))


@pytest.fixture
def bridge_api(bridge_key, request):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    client = RecordingLaneClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bridge_key}")
    yield client
    client.close()
    name = request.node.originalname
    assert client.paths == PATHS.get(name), (
        f"{name}: the calls were answered by {client.paths}, the table says {PATHS.get(name)}"
    )
