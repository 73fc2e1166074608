"""Celery tasks: they take ids and re-read the rows, so a retry sees the current state."""

import dataclasses
import logging
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from notifications.delivery import (
    PostAnswer,
    delivery_claim,
    delivery_give_up,
    delivery_schedule_retry,
    event_emails_send,
    retry_delay_seconds,
    webhook_post,
    webhook_try_record,
)
from notifications.models import Event, WebhookDelivery, WebhookDeliveryTry, WebhookEndpoint

logger = logging.getLogger(__name__)

# The database away for a moment: the task tries again, sooner than a receiver's backoff.
DATABASE_ERRORS = (OperationalError, InterfaceError)


def event_dispatch_enqueue(*, event_id: Any) -> None:
    """Queue the fan-out; a broker that is down leaves it to the sweeper, never fails."""
    try:
        event_dispatch.delay(str(event_id))
    except Exception as error:
        logger.warning("Could not queue event %s (%r); the sweeper will", event_id, error)


def webhook_delivery_enqueue(*, delivery_id: Any) -> None:
    try:
        webhook_deliver.delay(str(delivery_id))
    except Exception as error:
        logger.warning("Could not queue delivery %s (%r); the sweeper will", delivery_id, error)


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
def webhook_deliver(self, delivery_id: str, answer: dict[str, Any] | None = None) -> str:
    """One try, claimed first so no other task sends the same delivery meanwhile; on
    failure retry later with exponential backoff and jitter, for at least
    NOTIFICATIONS_WEBHOOK_RETRY_FOR_SECONDS (a day by default).

    A database error retries the task in a few seconds; when the receiver had already
    answered, its answer goes with the retry (`answer`) and is recorded then, instead of
    the event being sent again.
    """
    try:
        if answer is None:
            delivery = delivery_claim(delivery_id=delivery_id)
            if delivery is None:
                return "settled or taken"
            answer = dataclasses.asdict(webhook_post(delivery=delivery))
        outcome = webhook_try_record(delivery_id=delivery_id, answer=PostAnswer(**answer))
        if outcome.final:
            return "delivered" if outcome.delivered else "failed"
        created_at = WebhookDelivery.objects.values_list("created_at", flat=True).get(
            pk=delivery_id
        )
        if (timezone.now() - created_at).total_seconds() >= (
            settings.NOTIFICATIONS_WEBHOOK_RETRY_FOR_SECONDS
        ):
            delivery_give_up(delivery_id=delivery_id)
            return "failed"
        delay = retry_delay_seconds(retries_done=self.request.retries)
        delivery_schedule_retry(delivery_id=delivery_id, delay=delay)
    except DATABASE_ERRORS as error:
        if self.request.is_eager:
            raise
        logger.warning("Delivery %s met the database away; retrying: %r", delivery_id, error)
        countdown = min(2 ** min(self.request.retries, 6), 60)
        raise self.retry(args=(delivery_id, answer), countdown=countdown, exc=error) from None
    if self.request.is_eager:
        # Without a worker (the embedded default) a retry would run at once, in the request;
        # the delivery stays pending with its retry time and the sweeper sends it again.
        return "scheduled"
    raise self.retry(args=(delivery_id, None), countdown=delay)


@shared_task(name="notifications.sweep", acks_late=True)
def notifications_sweep() -> int:
    """Re-queue what a lost task left behind: undispatched events, and pending deliveries
    whose retry time or claim passed NOTIFICATIONS_SWEEP_GRACE_SECONDS ago (the broker lost
    the task, was down when it was sent, or restarted empty; a worker died mid-try).
    Re-queueing one whose task is only late is harmless: the claim lets one task send."""
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
