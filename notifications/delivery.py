"""Sending: one signed webhook try, the retry delay, and the emails of an event."""

import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from django.conf import settings
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q
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
    Event.Type.FIRST_BLOOD_REVOKED: "notify_on_first_blood",
    Event.Type.WAVE_OPENED: "notify_on_waves",
}


@dataclass(frozen=True)
class TryOutcome:
    delivered: bool
    # No more tries: the endpoint answered 410 Gone (it is disabled) or was refused.
    final: bool
    error: str = ""


@dataclass(frozen=True)
class PostAnswer:
    """What one POST got back, before anything is written: it travels with a task's retry
    when the database was away, so an answer received is recorded, not asked for again."""

    status_code: int | None
    error: str
    refusal: str | None


# A retry task may run a moment before the time its delivery was given.
_EARLY_SECONDS = 2


def retry_delay_seconds(*, retries_done: int) -> float:
    """Exponential backoff with jitter: base·2^n capped, then a random share of it."""
    ceiling = min(
        settings.NOTIFICATIONS_WEBHOOK_BACKOFF_SECONDS * (2**retries_done),
        settings.NOTIFICATIONS_WEBHOOK_BACKOFF_MAX_SECONDS,
    )
    return ceiling * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not security


def delivery_lease_seconds() -> float:
    """How long a claimed try may take: the POST's timeout and a margin."""
    return settings.NOTIFICATIONS_WEBHOOK_TIMEOUT_SECONDS + 5


def delivery_claim(*, delivery_id: Any) -> WebhookDelivery | None:
    """Take a pending delivery that is due for one try, or None.

    One conditional UPDATE moves its next try past the lease, so a second task for the same
    delivery (the sweeper's re-queue, a message the broker handed out again) finds it taken
    and sends nothing; a worker that dies mid-try leaves it to the sweeper once the lease
    has passed.
    """
    now = timezone.now()
    taken = (
        WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
        .filter(
            Q(next_retry_at__isnull=True)
            | Q(next_retry_at__lte=now + timedelta(seconds=_EARLY_SECONDS))
        )
        .update(next_retry_at=now + timedelta(seconds=delivery_lease_seconds()))
    )
    if not taken:
        return None
    return WebhookDelivery.objects.select_related("endpoint", "event").get(pk=delivery_id)


def webhook_post(*, delivery: WebhookDelivery) -> PostAnswer:
    """POST the event to the endpoint once, signed; nothing is written here."""
    endpoint, event = delivery.endpoint, delivery.event
    body = json.dumps(event.payload, separators=(",", ":"))
    now = timezone.now()
    refusal = url_refusal(endpoint.url)
    if refusal:
        return PostAnswer(None, f"refused by the egress guard: {refusal}", str(refusal))
    # The same webhook-id on every try lets the receiver drop repeats.
    msg_id = f"msg_{delivery.pk.hex}"
    headers = {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(endpoint.secret).sign(msg_id=msg_id, timestamp=now, data=body),
    }
    try:
        with guarded_client(
            timeout=settings.NOTIFICATIONS_WEBHOOK_TIMEOUT_SECONDS, retries=0
        ) as client:
            response = client.post(endpoint.url, content=body.encode(), headers=headers)
    except httpx.HTTPError as exc:
        guard = refusal_in(exc)
        if guard:
            return PostAnswer(None, f"refused by the egress guard: {guard}", str(guard))
        return PostAnswer(None, repr(exc)[:500], None)
    error = "" if 200 <= response.status_code < 300 else f"HTTP {response.status_code}"
    return PostAnswer(response.status_code, error, None)


def webhook_try_record(*, delivery_id: Any, answer: PostAnswer) -> TryOutcome:
    """Log the try and settle the delivery: delivered on a 2xx (the acknowledgement that
    ends its tries), failed on 410 Gone or a refusal, else left pending for a retry."""
    status_code, error = answer.status_code, answer.error
    delivered = status_code is not None and 200 <= status_code < 300
    gone = status_code == 410
    final = delivered or gone or bool(answer.refusal)
    changes: dict[str, Any] = {"attempts": F("attempts") + 1, "last_error": error}
    if delivered:
        changes.update(
            status=WebhookDelivery.Status.DELIVERED,
            delivered_at=timezone.now(),
            next_retry_at=None,
        )
    elif final:
        changes.update(status=WebhookDelivery.Status.FAILED, next_retry_at=None)
    with transaction.atomic():
        WebhookDeliveryTry.objects.create(
            delivery_id=delivery_id, status_code=status_code, error=error, succeeded=delivered
        )
        WebhookDelivery.objects.filter(
            pk=delivery_id, status=WebhookDelivery.Status.PENDING
        ).update(**changes)
        if gone:
            WebhookEndpoint.objects.filter(deliveries__pk=delivery_id).update(
                active=False, disabled_reason="The endpoint answered 410 Gone."
            )
    return TryOutcome(delivered=delivered, final=final, error=error)


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
    if event.type == Event.Type.WAVE_OPENED:
        names = ", ".join(event.payload.get("challenge_names", []))
        closes_ms = event.payload.get("closes_at") or 0
        closes = f"{datetime.fromtimestamp(closes_ms / 1000, UTC):%Y-%m-%d %H:%M} UTC"
        return headline, (
            f"New challenges are open until {closes}: {names}.{link}"
            if names
            else f"New challenges are open until {closes}.{link}"
        )
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
