"""Reads of the notifications app."""

import uuid
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet

from notifications.models import Event, EventRecipient, WebhookDelivery, WebhookEndpoint
from players.selectors import rows_for_creator, workspaces_for_user

PLAYER_EVENT_TYPES = (
    Event.Type.CHALLENGE_FIRST_BLOOD,
    Event.Type.CHALLENGE_RECORD_BEATEN,
    Event.Type.FIRST_BLOOD_REVOKED,
)


def events_for_creator(
    *, user: AbstractBaseUser, workspace_id: uuid.UUID | None = None, type: str | None = None
) -> QuerySet[Event]:
    events = rows_for_creator(Event.objects, user=user, workspace_id=workspace_id).exclude(
        type=Event.Type.WEBHOOK_TEST
    )
    if type:
        events = events.filter(type=type)
    return events.order_by("-occurred_at", "id")


def webhook_endpoints_for_creator(
    *, user: AbstractBaseUser, workspace_id: uuid.UUID | None = None
) -> QuerySet[WebhookEndpoint]:
    # Like secrets, endpoints are for owners and editors only.
    endpoints = WebhookEndpoint.objects.filter(
        workspace__in=workspaces_for_user(user=user, writable=True)
    )
    if workspace_id:
        endpoints = endpoints.filter(workspace_id=workspace_id)
    return endpoints.order_by("created_at", "id")


def webhook_deliveries_for_endpoint(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    return endpoint.deliveries.select_related("event").order_by("-created_at")


def player_notifications(*, account: Any, limit: int = 10) -> list[EventRecipient]:
    """The header list: the player's latest events, unread first marked."""
    if not getattr(account, "is_authenticated", False):
        return []
    return list(
        EventRecipient.objects.filter(account=account, event__type__in=PLAYER_EVENT_TYPES)
        .select_related("event")
        .order_by("-event__occurred_at")[:limit]
    )


def player_unread_count(*, account: Any) -> int:
    if not getattr(account, "is_authenticated", False):
        return 0
    return EventRecipient.objects.filter(account=account, read_at__isnull=True).count()
