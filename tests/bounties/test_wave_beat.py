"""Beat opens and closes waves (SPEC §10 Waves): each opening and closing is one event in
the feed however often the task runs, the opening is mailed once to the workspace's players
who want it (the periodic task itself is installed by migrate:
test_console_waves.py)."""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from challenges.models import Wave
from challenges.services.waves import wave_create, wave_update, waves_tick
from challenges.tasks import waves_tick_task
from notifications.models import Event, EventRecipient
from players.models import PlayerProfile
from players.services import end_user_for_account, profile_create
from tests.factories import make_challenge, make_end_user, make_player

pytestmark = pytest.mark.django_db(transaction=True)


def _player(workspace, email, **preferences):
    account = make_player(email)
    profile_create(account=account, display_name=email.split("@")[0])
    PlayerProfile.objects.filter(account=account).update(**preferences)
    end_user_for_account(workspace=workspace, account=account)
    return account


@pytest.fixture
def wave(workspace):
    now = timezone.now()
    return wave_create(
        workspace=workspace,
        name="Week 1",
        challenge_ids=[make_challenge(workspace=workspace, name="Vault").id],
        opens_at=now - timedelta(seconds=5),
        closes_at=now + timedelta(hours=1),
    )


def events(kind: str):
    return Event.objects.filter(type=kind)


def test_a_due_wave_opens_once_with_one_event_and_one_mail_each(
    client, workspace, other_workspace, wave
):
    keen = _player(workspace, "keen@example.com")
    _player(workspace, "quiet@example.com", notify_on_waves=False)
    _player(other_workspace, "elsewhere@example.com")
    make_end_user(workspace=workspace, external_id="dify-user-1")  # no account: no mail

    assert waves_tick_task() == {"opened": 1, "closed": 0}
    assert waves_tick_task() == {"opened": 0, "closed": 0}
    assert waves_tick().opened == 0

    wave.refresh_from_db()
    assert wave.state == Wave.State.OPEN
    (opened,) = events("wave_opened")
    assert opened.workspace_id == workspace.id
    assert opened.payload["name"] == "Week 1"
    assert opened.payload["challenge_names"] == ["Vault"]
    assert [message.to for message in mail.outbox] == [["keen@example.com"]]
    assert mail.outbox[0].subject == "Wave “Week 1” is open"
    assert "Vault" in mail.outbox[0].body
    assert "/challenges/" in mail.outbox[0].body
    assert "/notifications/unsubscribe/" in mail.outbox[0].body
    # Players see it in the header list; the other workspace's player does not.
    assert set(
        EventRecipient.objects.filter(event=opened).values_list("account__email", flat=True)
    ) == {"keen@example.com", "quiet@example.com"}
    link = re.search(r"http://\S+/notifications/unsubscribe/\S+/", mail.outbox[0].body).group(0)
    assert client.post("/" + link.split("://", 1)[1].split("/", 1)[1]).status_code == 200
    assert PlayerProfile.objects.get(account=keen).notify_on_waves is False


def test_a_wave_closes_once_with_one_event_and_no_mail(workspace, wave):
    waves_tick()
    mail.outbox.clear()
    wave_update(
        wave=wave,
        closes_at=timezone.now() - timedelta(seconds=1),
        opens_at=timezone.now() - timedelta(hours=1),
    )
    Wave.objects.filter(pk=wave.pk).update(state=Wave.State.OPEN)

    first, second = waves_tick(), waves_tick()

    assert (first.closed, second.closed) == (1, 0)
    wave.refresh_from_db()
    assert wave.state == Wave.State.CLOSED
    assert events("wave_closed").count() == 1
    assert events("wave_opened").count() == 1
    assert mail.outbox == []


def test_a_wave_whose_window_passed_while_beat_was_away_closes_without_opening(workspace):
    now = timezone.now()
    missed = wave_create(
        workspace=workspace,
        name="Missed",
        challenge_ids=[],
        opens_at=now - timedelta(hours=2),
        closes_at=now - timedelta(hours=1),
    )

    assert waves_tick().closed == 1

    missed.refresh_from_db()
    assert missed.state == Wave.State.CLOSED
    assert not events("wave_opened").exists()
    assert events("wave_closed").count() == 1


def test_a_wave_not_due_stays_scheduled(workspace):
    later = wave_create(
        workspace=workspace,
        name="Later",
        challenge_ids=[],
        opens_at=timezone.now() + timedelta(hours=1),
        closes_at=timezone.now() + timedelta(hours=2),
    )
    assert waves_tick().opened == 0
    later.refresh_from_db()
    assert later.state == Wave.State.SCHEDULED
    assert not Event.objects.exists()


def test_a_rescheduled_wave_is_announced_again_at_its_new_time(workspace, wave):
    waves_tick()
    now = timezone.now()
    wave_update(wave=wave, opens_at=now - timedelta(seconds=1), closes_at=now + timedelta(days=1))

    assert waves_tick().opened == 1
    assert events("wave_opened").count() == 2


def test_the_creators_feed_names_the_wave(workspace, wave, creator, client):
    waves_tick()
    client.force_login(creator)

    feed = client.get("/console/api/events").json()["results"]

    assert [row["type"] for row in feed] == ["wave_opened"]
