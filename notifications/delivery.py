"""Sending: one signed webhook try, the retry delay, and the emails of an event."""

import json
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
from django.conf import settings
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from core.egress import guarded_client, refusal_in, url_refusal
from notifications.models import (
    Event,
    EventRecipient,
    WebhookDelivery,
    WebhookDeliveryTry,
    WebhookEndpoint,
)
from notifications.subjects import event_headline, event_subjects
from players.models import PlayerProfile

UNSUBSCRIBE_SALT = "notifications.unsubscribe"
# Which profile switch allows which email.
EMAIL_PREFERENCE = {
    Event.Type.CHALLENGE_FIRST_BLOOD: "notify_on_first_blood",
    Event.Type.CHALLENGE_RECORD_BEATEN: "notify_on_record_beaten",
}


@dataclass(frozen=True)
class TryOutcome:
    delivered: bool
    # No more tries: the endpoint answered 410 Gone (it is disabled) or was refused.
    final: bool
    error: str = ""


def retry_delay_seconds(*, retries_done: int) -> float:
    """Exponential backoff with jitter: base·2^n capped, then a random share of it."""
    ceiling = min(
        settings.NOTIFICATIONS_WEBHOOK_BACKOFF_SECONDS * (2**retries_done),
        settings.NOTIFICATIONS_WEBHOOK_BACKOFF_MAX_SECONDS,
    )
    return ceiling * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not security


def webhook_try(*, delivery: WebhookDelivery) -> TryOutcome:
    """POST the event to the endpoint once, signed; log the try; settle the delivery."""
    endpoint, event = delivery.endpoint, delivery.event
    body = json.dumps(event.payload, separators=(",", ":"))
    now = timezone.now()
    status_code, error = None, ""
    refusal = url_refusal(endpoint.url)
    if refusal:
        error = f"refused by the egress guard: {refusal}"
    else:
        # The same webhook-id on every try lets the receiver drop repeats.
        msg_id = f"msg_{delivery.pk.hex}"
        headers = {
            "content-type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(endpoint.secret).sign(
                msg_id=msg_id, timestamp=now, data=body
            ),
        }
        try:
            with guarded_client(
                timeout=settings.NOTIFICATIONS_WEBHOOK_TIMEOUT_SECONDS, retries=0
            ) as client:
                response = client.post(endpoint.url, content=body.encode(), headers=headers)
            status_code = response.status_code
            if not 200 <= status_code < 300:
                error = f"HTTP {status_code}"
        except httpx.HTTPError as exc:
            guard = refusal_in(exc)
            error = f"refused by the egress guard: {guard}" if guard else repr(exc)[:500]
            refusal = str(guard) if guard else None
    delivered = status_code is not None and 200 <= status_code < 300
    gone = status_code == 410
    with transaction.atomic():
        WebhookDeliveryTry.objects.create(
            delivery=delivery, status_code=status_code, error=error, succeeded=delivered
        )
        delivery.attempts += 1
        delivery.last_error = error
        if delivered:
            delivery.status = WebhookDelivery.Status.DELIVERED
            delivery.delivered_at = timezone.now()
            delivery.next_retry_at = None
        elif gone or refusal:
            delivery.status = WebhookDelivery.Status.FAILED
            delivery.next_retry_at = None
            if gone:
                WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
                    active=False, disabled_reason="The endpoint answered 410 Gone."
                )
        delivery.save(
            update_fields=["attempts", "last_error", "status", "delivered_at", "next_retry_at"]
        )
    return TryOutcome(delivered=delivered, final=delivered or gone or bool(refusal), error=error)


def delivery_schedule_retry(*, delivery_id: Any, delay: float) -> None:
    WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING).update(
        next_retry_at=timezone.now() + timedelta(seconds=delay)
    )


def delivery_give_up(*, delivery_id: Any) -> None:
    WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING).update(
        status=WebhookDelivery.Status.FAILED, next_retry_at=None
    )


def unsubscribe_token(*, account_id: Any, preference: str) -> str:
    return signing.dumps(
        {"account": str(account_id), "preference": preference}, salt=UNSUBSCRIBE_SALT
    )


def unsubscribe_read(token: str) -> dict[str, str] | None:
    try:
        data = signing.loads(token, salt=UNSUBSCRIBE_SALT)
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or data.get("preference") not in EMAIL_PREFERENCE.values():
        return None
    return data


def _email_text(event: Event) -> tuple[str, str]:
    subject = event_subjects([event]).get(event.id)
    headline = event_headline(event, subject)
    link = f"\n\n{settings.SITE_URL}{subject.path}\n" if subject else "\n"
    if event.type == Event.Type.CHALLENGE_FIRST_BLOOD:
        return headline, f"Another player solved a challenge you played before anyone else.{link}"
    score = event.payload.get("new_record", {}).get("score")
    return headline, f"Someone took the top of its board (new score: {score}).{link}"


def event_emails_send(*, event: Event) -> int:
    """Email the event's recipients who opted in; each message has its unsubscribe link."""
    preference = EMAIL_PREFERENCE.get(event.type)
    if not preference:
        return 0
    profiles = (
        PlayerProfile.objects.filter(
            account_id__in=EventRecipient.objects.filter(event=event).values("account_id"),
            **{preference: True},
        )
        .exclude(account__email="")
        .select_related("account")
    )
    subject, text = _email_text(event)
    sent = 0
    for profile in profiles:
        token = unsubscribe_token(account_id=profile.account_id, preference=preference)
        link = settings.SITE_URL + reverse("notifications-unsubscribe", args=[token])
        sent += send_mail(
            subject,
            f"{text}\nTo stop these emails: {link}\n",
            settings.DEFAULT_FROM_EMAIL,
            [profile.account.email],
        )
    return sent
