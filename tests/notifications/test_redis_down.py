"""With the channel layer's Redis unreachable, attempts are still recorded (with their
events) and the pages still render; the live push is what is lost, not the write."""

import time

import pytest
from channels.layers import channel_layers
from django.test import Client, override_settings

from challenges.models import ChallengeAttempt, LeaderboardEntry
from challenges.services.attempts import attempt_record
from challenges.services.collections import collection_create, collection_set_challenges
from judging.verdicts import Verdict
from notifications.models import Event
from tests.factories import make_challenge, make_end_user

UNREACHABLE = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # Nothing listens here: the shared Redis other developers use is never stopped.
        "CONFIG": {"hosts": ["redis://127.0.0.1:6390/0"]},
    }
}


@pytest.fixture
def unreachable_layer():
    with override_settings(CHANNEL_LAYERS=UNREACHABLE):
        channel_layers.backends = {}
        yield
    channel_layers.backends = {}


@pytest.mark.django_db(transaction=True)
def test_it_records_every_attempt_and_renders_the_pages_while_redis_is_unreachable(
    workspace, unreachable_layer
):
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    collection = collection_create(workspace=workspace, user=None, name="Down", is_public=True)
    collection_set_challenges(collection=collection, challenge_ids=[challenge.id])
    started = time.monotonic()
    for n, elapsed in enumerate((900, 500, 100)):
        attempt_record(
            challenge=challenge,
            end_user=make_end_user(workspace=workspace, external_id=f"down-{n}"),
            verdict=Verdict(True, "ok"),
            elapsed_ms=elapsed,
        )
    assert time.monotonic() - started < 30

    assert ChallengeAttempt.objects.filter(challenge=challenge).count() == 3
    assert LeaderboardEntry.objects.filter(challenge=challenge).count() == 3
    assert sorted(Event.objects.values_list("type", flat=True)) == [
        "challenge_first_blood",
        "challenge_record_beaten",
        "challenge_record_beaten",
    ]
    for path in (f"/challenges/{challenge.slug}/", f"/collections/{collection.slug}/"):
        response = Client().get(path)
        assert response.status_code == 200, path
        assert "down-2" in response.content.decode()
