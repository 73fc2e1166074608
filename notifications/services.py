"""Writes of the notifications app: emitting events once, webhook endpoints, read marks."""

import base64
import logging
import secrets
import uuid
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from core.egress import url_refusal
from core.errors import ApplicationError
from notifications.models import Event, EventRecipient, WebhookDelivery, WebhookEndpoint
from notifications.tasks import event_dispatch_enqueue, webhook_delivery_enqueue
from players.models import PlayerProfile, Workspace

logger = logging.getLogger(__name__)


def epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _event_insert_sql() -> str:
    table = Event._meta.db_table
    columns = "id, type, workspace_id, subject_id, dedupe_key, payload, occurred_at"
    # Only our own table name is interpolated; every value goes as a parameter.
    return (
        f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s, %s, %s, %s) "  # noqa: S608
        "ON CONFLICT (type, subject_id, dedupe_key) DO NOTHING RETURNING id"
    )


def event_emit_on_commit(
    *,
    type: str,
    workspace_id: Any,
    subject_id: Any,
    dedupe_key: str,
    payload: dict[str, Any],
    occurred_at: datetime,
    recipient_account_ids: list[Any] = (),
) -> bool:
    """Store the event in the caller's transaction, once per occurrence, and fan it out
    after the commit.

    The unique (type, subject, dedupe key) with INSERT … ON CONFLICT DO NOTHING is the
    guard: of concurrent emitters of one occurrence exactly one row is written, and only
    that writer schedules the delivery. Returns whether this call stored the event.
    """
    fields = {field.attname: field for field in Event._meta.concrete_fields}
    values = {
        "id": uuid.uuid4(),
        "type": type,
        "workspace_id": workspace_id,
        "subject_id": str(subject_id),
        "dedupe_key": dedupe_key,
        "payload": {"event": type, **payload, "occurred_at": epoch_ms(occurred_at)},
        "occurred_at": occurred_at,
    }
    params = [
        fields[name].get_db_prep_value(value, connection, prepared=False)
        for name, value in values.items()
    ]
    with connection.cursor() as cursor:
        cursor.execute(_event_insert_sql(), params)
        stored = cursor.fetchone() is not None
    if stored:
        event_id = values["id"]
        EventRecipient.objects.bulk_create(
            [
                EventRecipient(event_id=event_id, account_id=account_id)
                for account_id in dict.fromkeys(recipient_account_ids)
            ],
            ignore_conflicts=True,
        )
        transaction.on_commit(lambda: event_dispatch_enqueue(event_id=event_id))
    return stored


def webhook_secret_generate() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _webhook_url_check(url: str) -> None:
    refusal = url_refusal(url)
    if refusal:
        raise ApplicationError(
            f"This webhook URL is not allowed: {refusal}", fields={"url": [refusal]}
        )


def _event_types_check(events: list[str]) -> list[str]:
    known = {choice for choice in Event.Type.values if choice != Event.Type.WEBHOOK_TEST}
    unknown = [name for name in events if name not in known]
    if unknown:
        message = f"Unknown event types: {', '.join(map(str, unknown))}."
        raise ApplicationError(message, fields={"events": [message]})
    return list(dict.fromkeys(events))


def webhook_endpoint_create(
    *, workspace: Workspace, url: str, events: list[str] = (), active: bool = True
) -> WebhookEndpoint:
    """A new endpoint with a fresh secret; the caller shows the secret once."""
    _webhook_url_check(url)
    return WebhookEndpoint.objects.create(
        workspace=workspace,
        url=url,
        events=_event_types_check(list(events)),
        active=active,
        secret=webhook_secret_generate(),
    )


def webhook_endpoint_update(
    *,
    endpoint: WebhookEndpoint,
    url: str | None = None,
    events: list[str] | None = None,
    active: bool | None = None,
) -> WebhookEndpoint:
    if url is not None:
        _webhook_url_check(url)
        endpoint.url = url
    if events is not None:
        endpoint.events = _event_types_check(list(events))
    if active is not None:
        endpoint.active = active
        if active:
            endpoint.disabled_reason = ""
    endpoint.save()
    return endpoint


def webhook_endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    endpoint.delete()


def webhook_endpoint_disable(*, endpoint_id: Any, reason: str) -> None:
    WebhookEndpoint.objects.filter(pk=endpoint_id).update(active=False, disabled_reason=reason)


def webhook_test_send(*, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """Send a `webhook_test` event to this endpoint alone, through the usual delivery."""
    now = timezone.now()
    with transaction.atomic():
        event = Event.objects.create(
            type=Event.Type.WEBHOOK_TEST,
            workspace_id=endpoint.workspace_id,
            subject_id=str(endpoint.pk),
            dedupe_key=str(uuid.uuid4()),
            payload={"event": "webhook_test", "occurred_at": epoch_ms(now)},
            occurred_at=now,
            dispatched_at=now,
        )
        delivery = WebhookDelivery.objects.create(event=event, endpoint=endpoint, next_retry_at=now)
        transaction.on_commit(lambda: webhook_delivery_enqueue(delivery_id=delivery.pk))
    return delivery


def events_mark_read(*, account: Any, event_ids: list[Any] | None = None) -> int:
    """Mark the player's unread events read (these, or all of them)."""
    unread = EventRecipient.objects.filter(account=account, read_at__isnull=True)
    if event_ids is not None:
        unread = unread.filter(event_id__in=event_ids)
    return unread.update(read_at=timezone.now())


def unsubscribe_apply(*, account_id: Any, preference: str) -> None:
    """Turn one email preference off (the signed link named it)."""
    if preference not in ("notify_on_first_blood", "notify_on_record_beaten", "notify_on_waves"):
        raise ApplicationError("Unknown preference.")
    PlayerProfile.objects.filter(account_id=account_id).update(**{preference: False})
