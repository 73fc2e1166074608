"""The periodic jobs: installed by migrate; the sweeper sends what a lost task left; old
delivery logs are pruned."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from notifications.models import Event, WebhookDelivery, WebhookDeliveryTry, WebhookEndpoint
from notifications.tasks import notifications_prune, notifications_sweep

pytestmark = pytest.mark.django_db


def test_migrate_installs_the_sweeper_and_the_pruning():
    tasks = set(PeriodicTask.objects.filter(enabled=True).values_list("task", flat=True))
    assert {"notifications.sweep", "notifications.prune"} <= tasks


def _event(workspace, **fields):
    long_ago = timezone.now() - timedelta(hours=1)
    return Event.objects.create(
        type="challenge_first_blood",
        workspace=workspace,
        subject_id="c1",
        dedupe_key="first",
        payload={"event": "challenge_first_blood"},
        occurred_at=long_ago,
        **fields,
    )


def test_the_sweeper_dispatches_an_event_whose_task_was_lost(workspace, mailoutbox):
    event = _event(workspace)
    assert notifications_sweep() == 1
    event.refresh_from_db()
    assert event.dispatched_at is not None
    assert notifications_sweep() == 0


def test_pruning_drops_only_old_delivery_tries(workspace):
    endpoint = WebhookEndpoint.objects.create(
        workspace=workspace, url="https://example.com/hook", secret="whsec_x"
    )
    delivery = WebhookDelivery.objects.create(
        event=_event(workspace, dispatched_at=timezone.now()), endpoint=endpoint, status="failed"
    )
    old = WebhookDeliveryTry.objects.create(delivery=delivery, status_code=500)
    WebhookDeliveryTry.objects.filter(pk=old.pk).update(
        attempted_at=timezone.now() - timedelta(days=60)
    )
    recent = WebhookDeliveryTry.objects.create(delivery=delivery, status_code=500)
    assert notifications_prune() == 1
    assert list(WebhookDeliveryTry.objects.values_list("pk", flat=True)) == [recent.pk]
