"""`/console/api/waves` (SPEC §10 Waves): creators schedule a wave of their own challenges;
a wave closes after it opens; another workspace's wave or challenge is not theirs."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from challenges.models import Wave
from challenges.services.waves import wave_create
from challenges.tasks import WAVES_TICK_TASK
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

URL = "/console/api/waves"


def window(opens_in_hours=1, hours=2) -> dict[str, str]:
    opens = timezone.now() + timedelta(hours=opens_in_hours)
    return {
        "opens_at": opens.isoformat(),
        "closes_at": (opens + timedelta(hours=hours)).isoformat(),
    }


def test_a_creator_schedules_a_wave_of_their_challenges(creator_api, workspace):
    first, second = make_challenge(workspace=workspace), make_challenge(workspace=workspace)

    created = creator_api.post(
        URL,
        {"name": "Week 1", "challenges": [str(first.id), str(second.id)], **window()},
        format="json",
    )

    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["name"] == "Week 1"
    assert sorted(body["challenges"]) == sorted([str(first.id), str(second.id)])
    assert (body["state"], body["is_open"]) == ("scheduled", False)
    assert body["workspace"] == str(workspace.id)
    assert creator_api.get(URL).json()["results"][0]["id"] == body["id"]
    assert creator_api.get(f"{URL}/{body['id']}").json()["name"] == "Week 1"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"closes_at": (timezone.now() - timedelta(days=1)).isoformat()}, "closes_at"),
        ({"name": "   "}, "name"),
        ({"challenges": ["not-an-id"]}, "challenges"),
        ({"opens_at": "next tuesday"}, "opens_at"),
        ({"surprise": True}, "surprise"),
    ],
)
def test_a_wave_that_cannot_run_is_a_400_naming_the_field(creator_api, workspace, change, field):
    body = {"name": "Week 1", "challenges": [], **window(), **change}

    response = creator_api.post(URL, body, format="json")

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert not Wave.objects.exists()


def test_another_workspaces_wave_and_challenges_are_not_found(
    creator_api, outsider_api, workspace, other_workspace
):
    ours = make_challenge(workspace=workspace)
    wave = wave_create(
        workspace=workspace,
        name="Ours",
        challenge_ids=[ours.id],
        opens_at=timezone.now(),
        closes_at=timezone.now() + timedelta(hours=1),
    )

    assert outsider_api.get(f"{URL}/{wave.id}").status_code == 404
    assert (
        outsider_api.patch(f"{URL}/{wave.id}", {"name": "Mine"}, format="json").status_code == 404
    )
    assert outsider_api.delete(f"{URL}/{wave.id}").status_code == 404
    assert outsider_api.get(URL).json()["count"] == 0
    # Their challenge cannot join our wave; it reads like one that does not exist.
    theirs = make_challenge(workspace=other_workspace)
    response = creator_api.post(
        URL, {"name": "Mixed", "challenges": [str(theirs.id)], **window()}, format="json"
    )
    assert response.status_code == 400
    assert str(theirs.id) in response.json()["error"]["message"]
    assert Wave.objects.count() == 1


def test_a_creator_reschedules_a_wave_and_a_viewer_cannot(creator_api, viewer_api, workspace):
    wave = wave_create(
        workspace=workspace,
        name="Week 1",
        challenge_ids=[],
        opens_at=timezone.now() + timedelta(hours=1),
        closes_at=timezone.now() + timedelta(hours=2),
    )

    assert viewer_api.patch(f"{URL}/{wave.id}", {"name": "x"}, format="json").status_code == 403
    moved = creator_api.patch(f"{URL}/{wave.id}", window(opens_in_hours=24), format="json")
    backwards = creator_api.patch(
        f"{URL}/{wave.id}",
        {"closes_at": (timezone.now() - timedelta(days=5)).isoformat()},
        format="json",
    )

    assert moved.status_code == 200
    assert moved.json()["opens_at"] > (timezone.now() + timedelta(hours=23)).isoformat()
    assert backwards.status_code == 400
    assert "closes_at" in backwards.json()["error"]["fields"]
    assert creator_api.delete(f"{URL}/{wave.id}").status_code == 204
    assert not Wave.objects.exists()


def test_migrate_installs_the_beat_task_that_opens_and_closes_waves():
    task = PeriodicTask.objects.get(task=WAVES_TICK_TASK)
    assert task.enabled
    assert (task.interval.every, task.interval.period) == (1, "minutes")
