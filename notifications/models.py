"""Events (the seed's notifications) and their delivery to webhook endpoints and players."""

import uuid

from django.conf import settings
from django.db import models

from players.models import Workspace


class Event(models.Model):
    """One occurrence of a challenge event, stored once: the unique (type, subject,
    dedupe key) makes concurrent emitters of the same occurrence collapse into one row."""

    class Type(models.TextChoices):
        CHALLENGE_FIRST_BLOOD = "challenge_first_blood"
        CHALLENGE_RECORD_BEATEN = "challenge_record_beaten"
        # A review failed the first blood or passed an earlier attempt (SPEC §10).
        FIRST_BLOOD_REVOKED = "first_blood_revoked"
        TEAM_PAIRING_COMPLETED = "team_pairing_completed"
        # A wave of challenges opened or closed on its schedule (SPEC §10 Waves).
        WAVE_OPENED = "wave_opened"
        WAVE_CLOSED = "wave_closed"
        # Sent only by an endpoint's "send test event" action, never stored for players.
        WEBHOOK_TEST = "webhook_test"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    type = models.CharField(max_length=40, choices=Type.choices)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="events")
    # The challenge (or red/blue challenge) the event is about.
    subject_id = models.CharField(max_length=64)
    dedupe_key = models.CharField(max_length=128)
    payload = models.JSONField()
    occurred_at = models.DateTimeField()
    # Set once the fan-out task has created the deliveries and sent the emails; the sweeper
    # re-sends events whose task was lost (a broker down at commit time).
    dispatched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-occurred_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["type", "subject_id", "dedupe_key"], name="event_unique_occurrence"
            )
        ]
        indexes = [models.Index(fields=["workspace", "-occurred_at"])]

    def __str__(self) -> str:
        return f"{self.type} {self.subject_id}"


class EventRecipient(models.Model):
    """A site account the header list (and email) tells about an event: first blood goes to
    those who played the challenge, record beaten to the previous holder."""

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="recipients")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["event", "account"], name="event_recipient_unique")
        ]
        indexes = [models.Index(fields=["account", "read_at"])]

    def __str__(self) -> str:
        return f"{self.account} ← {self.event_id}"


class WebhookEndpoint(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="webhook_endpoints"
    )
    url = models.URLField(max_length=2000)
    # Standard Webhooks form, whsec_<base64>; shown once when created.
    secret = models.CharField(max_length=100)
    # Event types sent; empty means all.
    events = models.JSONField(default=list, blank=True)
    active = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return self.url

    def wants(self, event_type: str) -> bool:
        return not self.events or event_type in self.events


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    # The `webhook-id` header: one per delivery, the same on every retry.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    attempts = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    last_error = models.TextField(blank=True)
    next_retry_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["event", "endpoint"], name="webhook_delivery_unique_event_endpoint"
            )
        ]
        indexes = [models.Index(fields=["status", "next_retry_at"])]

    def __str__(self) -> str:
        return f"{self.event_id} → {self.endpoint_id} ({self.status})"


class WebhookDeliveryTry(models.Model):
    """The log row of one try of a delivery."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="tries")
    attempted_at = models.DateTimeField(auto_now_add=True)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    succeeded = models.BooleanField(default=False)

    class Meta:
        ordering = ["attempted_at", "id"]

    def __str__(self) -> str:
        return f"try of {self.delivery_id}: {self.status_code or self.error[:40]}"
