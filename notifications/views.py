"""Pages of the notifications app: the signed unsubscribe link of an email, and marking the
header list read."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils.html import escape
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from notifications.delivery import unsubscribe_read
from notifications.services import events_mark_read, unsubscribe_apply


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
