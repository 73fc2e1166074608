"""A challenge with prerequisites through the bridge with the raw lane on: the lane hands
it to Django's path, which refuses a player who has not solved them (403 level_locked) —
also when the lane had cached the challenge before it got its prerequisites."""

import pytest

from challenges.models import ChallengeAttempt
from challenges.services.prerequisites import challenge_set_prerequisites
from tests.bridge.test_lane import answered_by_lane, call, handed_on, lane, raw_key  # noqa: F401
from tests.factories import make_challenge, record_win

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_locked_challenge_is_handed_to_django_and_refused(lane, workspace):  # noqa: F811
    basics = make_challenge(workspace=workspace, name="Basics", success_pattern="open sesame")
    finale = make_challenge(workspace=workspace, name="Finale", success_pattern="open sesame")
    challenge_set_prerequisites(challenge=finale, prerequisite_ids=[basics.id])

    refused = handed_on(lane, call(finale, output="open sesame"))

    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "level_locked"
    assert "“Basics”" in refused.json()["error"]["message"]
    assert not ChallengeAttempt.objects.filter(challenge=finale).exists()

    record_win(basics, "dify-user-1")
    opened = handed_on(lane, call(finale, output="open sesame"))
    assert opened.status_code == 200
    assert opened.json()["challenge_succeeded"] is True


def test_prerequisites_added_after_the_lane_cached_the_challenge_lock_it(
    lane,  # noqa: F811
    workspace,
):
    basics = make_challenge(workspace=workspace, name="Basics", success_pattern="open sesame")
    finale = make_challenge(workspace=workspace, name="Finale", success_pattern="open sesame")
    assert answered_by_lane(lane, call(finale)).status_code == 200  # cached as open

    challenge_set_prerequisites(challenge=finale, prerequisite_ids=[basics.id])
    refused = lane.post("/bridge/dify/challenge-evaluator", call(finale), content_type="text/plain")
    again = handed_on(lane, call(finale))

    assert refused.status_code == again.status_code == 403
    assert again.json()["error"]["code"] == "level_locked"
    assert ChallengeAttempt.objects.filter(challenge=finale).count() == 1
