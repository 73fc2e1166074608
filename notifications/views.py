"""Pages of the notifications app: the signed unsubscribe link of an email, and marking the
header list read."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.html import escape
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from notifications.delivery import unsubscribe_read
from notifications.selectors import player_notifications
from notifications.services import events_mark_read, unsubscribe_apply
from notifications.subjects import event_headline, event_subjects


@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe(request, token: str):
    data = unsubscribe_read(token)
    if data is None:
        return HttpResponse(
            "This unsubscribe link is not valid.", status=400, content_type="text/plain"
        )
    if request.method == "GET":
        # A mail scanner may open links: only the button (a POST) changes anything. The
        # token itself proves the request, so this form needs no session.
        return HttpResponse(
            "<!doctype html><title>Unsubscribe</title><form method=post>"
            f"<p>Stop these emails? ({escape(data['preference'])})</p>"
            "<button>Unsubscribe</button></form>"
        )
    unsubscribe_apply(account_id=data["account"], preference=data["preference"])
    return HttpResponse(
        "You will no longer receive these emails. You can turn them back on at /profile/.",
        content_type="text/plain",
    )


@login_required
@require_POST
def mark_read(request):
    events_mark_read(account=request.user)
    target = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    return redirect(target)


@login_required
@require_GET
def header_list(request):
    """The page header's list of the player's latest events, with the unread count."""
    recipients = player_notifications(account=request.user)
    subjects = event_subjects(recipient.event for recipient in recipients)
    items = [
        {
            "title": event_headline(recipient.event, subjects.get(recipient.event.id)),
            "path": getattr(subjects.get(recipient.event.id), "path", None),
            "occurred_at": recipient.event.occurred_at,
            "unread": recipient.read_at is None,
        }
        for recipient in recipients
    ]
    unread = sum(1 for item in items if item["unread"])
    next_path = request.headers.get("HX-Current-URL", "/")
    return render(
        request,
        "notifications/_header.html",
        {"items": items, "unread": unread, "next": next_path},
    )
