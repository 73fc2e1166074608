"""Pages of the notifications app: the signed unsubscribe link of an email."""

from django.http import HttpResponse
from django.views.decorators.http import require_http_methods

from notifications.delivery import unsubscribe_read
from players.models import PlayerProfile


@require_http_methods(["GET", "POST"])
def unsubscribe(request, token: str):
    data = unsubscribe_read(token)
    if data is None:
        return HttpResponse(
            "This unsubscribe link is not valid.", status=400, content_type="text/plain"
        )
    PlayerProfile.objects.filter(account_id=data["account"]).update(**{data["preference"]: False})
    return HttpResponse(
        "You will no longer receive these emails. You can turn them back on at /profile/.",
        content_type="text/plain",
    )
