"""The event window on the bridge: the lane keeps challenges (and their workspace) in a
process cache, and a window the creators change afterwards still closes play at once."""

from datetime import timedelta

import pytest
from django.utils import timezone

from challenges.models import ChallengeAttempt
from players.events import workspace_event_update
from tests.bridge.conftest import EVALUATOR
from tests.bridge.test_lane import (  # noqa: F401 - the lane fixtures
    answered_by_lane,
    call,
    challenge,
    lane,
    raw_key,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_event_that_ended_after_the_lane_cached_it_refuses_at_once(lane, challenge, workspace):  # noqa: F811
    answered_by_lane(lane, call(challenge))
    workspace_event_update(workspace=workspace, ends_at=timezone.now() - timedelta(seconds=1))
    refused = lane.post(EVALUATOR, call(challenge), content_type="text/plain")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "challenge_closed"
    assert ChallengeAttempt.objects.count() == 1


def test_an_event_not_started_is_refused_on_the_bridge(lane, challenge, workspace):  # noqa: F811
    workspace_event_update(workspace=workspace, starts_at=timezone.now() + timedelta(days=1))
    refused = lane.post(EVALUATOR, call(challenge), content_type="text/plain")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "challenge_closed"
    assert not ChallengeAttempt.objects.exists()
