"""Celery tasks: they take ids and re-read the rows, so a retry sees the current state."""

import logging
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from notifications.delivery import (
    delivery_give_up,
    delivery_schedule_retry,
    event_emails_send,
    retry_delay_seconds,
    webhook_try,
)
from notifications.models import Event, WebhookDelivery, WebhookDeliveryTry, WebhookEndpoint

logger = logging.getLogger(__name__)


def event_dispatch_enqueue(*, event_id: Any) -> None:
    """Queue the fan-out; a broker that is down leaves it to the sweeper, never fails."""
    try:
        event_dispatch.delay(str(event_id))
    except Exception:
        logger.warning("Could not queue event %s; the sweeper will", event_id, exc_info=True)


def webhook_delivery_enqueue(*, delivery_id: Any) -> None:
    try:
        webhook_deliver.delay(str(delivery_id))
    except Exception:
        logger.warning("Could not queue delivery %s; the sweeper will", delivery_id, exc_info=True)


@shared_task(
    name="notifications.event_dispatch",
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=20,
)
def event_dispatch(event_id: str) -> int:
    """Create the event's webhook deliveries, send its emails, then queue each delivery."""
    with transaction.atomic():
        event = Event.objects.select_for_update().filter(pk=event_id).first()
        if event is None or event.dispatched_at is not None:
            return 0
        endpoints = WebhookEndpoint.objects.filter(workspace_id=event.workspace_id, active=True)
        now = timezone.now()
        for endpoint in endpoints:
            if endpoint.wants(event.type):
                WebhookDelivery.objects.get_or_create(
                    event=event, endpoint=endpoint, defaults={"next_retry_at": now}
                )
        event_emails_send(event=event)
        Event.objects.filter(pk=event.pk).update(dispatched_at=now)
        pending = list(
            WebhookDelivery.objects.filter(
                event=event, status=WebhookDelivery.Status.PENDING
            ).values_list("pk", flat=True)
        )
        for delivery_id in pending:
            transaction.on_commit(
                lambda delivery_id=delivery_id: webhook_delivery_enqueue(delivery_id=delivery_id)
            )
    return len(pending)


@shared_task(name="notifications.webhook_deliver", bind=True, acks_late=True, max_retries=None)
def webhook_deliver(self, delivery_id: str) -> str:
    """One try; on failure retry later with exponential backoff and jitter, for at least
    NOTIFICATIONS_WEBHOOK_RETRY_FOR_SECONDS (a day by default)."""
    delivery = (
        WebhookDelivery.objects.select_related("endpoint", "event")
        .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
        .first()
    )
    if delivery is None:
        return "settled"
    outcome = webhook_try(delivery=delivery)
    if outcome.final:
        return "delivered" if outcome.delivered else "failed"
    age = (timezone.now() - delivery.created_at).total_seconds()
    if age >= settings.NOTIFICATIONS_WEBHOOK_RETRY_FOR_SECONDS:
        delivery_give_up(delivery_id=delivery.pk)
        return "failed"
    delay = retry_delay_seconds(retries_done=self.request.retries)
    delivery_schedule_retry(delivery_id=delivery.pk, delay=delay)
    if self.request.is_eager:
        # Without a worker (the embedded default) a retry would run at once, in the request;
        # the delivery stays pending with its retry time and the sweeper sends it again.
        return "scheduled"
    raise self.retry(countdown=delay)


@shared_task(name="notifications.sweep", acks_late=True)
def notifications_sweep() -> int:
    """Re-queue what a lost task left behind: undispatched events and deliveries whose
    retry time passed long ago (the broker lost the task, or was down when it was sent)."""
    grace = timezone.now() - timedelta(seconds=settings.NOTIFICATIONS_SWEEP_GRACE_SECONDS)
    events = list(
        Event.objects.filter(dispatched_at__isnull=True, occurred_at__lt=grace)
        .exclude(type=Event.Type.WEBHOOK_TEST)
        .values_list("pk", flat=True)[:500]
    )
    for event_id in events:
        event_dispatch_enqueue(event_id=event_id)
    deliveries = list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.PENDING, next_retry_at__lt=grace
        ).values_list("pk", flat=True)[:500]
    )
    for delivery_id in deliveries:
        webhook_delivery_enqueue(delivery_id=delivery_id)
    return len(events) + len(deliveries)


@shared_task(name="notifications.prune", acks_late=True)
def notifications_prune() -> int:
    """Drop delivery log rows older than NOTIFICATIONS_DELIVERY_LOG_DAYS."""
    cutoff = timezone.now() - timedelta(days=settings.NOTIFICATIONS_DELIVERY_LOG_DAYS)
    deleted, _ = WebhookDeliveryTry.objects.filter(attempted_at__lt=cutoff).delete()
    return deleted
