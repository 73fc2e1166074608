from django import template

from notifications.models import Event
from notifications.selectors import player_notifications

register = template.Library()

TITLES = {
    Event.Type.CHALLENGE_FIRST_BLOOD: "First blood on a challenge you played",
    Event.Type.CHALLENGE_RECORD_BEATEN: "Your record was beaten",
}


@register.inclusion_tag("notifications/_header.html", takes_context=True)
def notification_list(context):
    """The page header's list of the player's latest events, with the unread count."""
    request = context.get("request")
    user = getattr(request, "user", None)
    recipients = player_notifications(account=user) if user is not None else []
    return {
        "items": [
            {
                "title": TITLES.get(recipient.event.type, recipient.event.type),
                "challenge_id": recipient.event.payload.get("challenge_id"),
                "occurred_at": recipient.event.occurred_at,
                "unread": recipient.read_at is None,
            }
            for recipient in recipients
        ],
        "unread": sum(1 for recipient in recipients if recipient.read_at is None),
        "csrf_token": context.get("csrf_token"),
        "next": request.get_full_path() if request is not None else "/",
    }
