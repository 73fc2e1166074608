from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ApplicationError, NotFoundError
from players.forms import ProfileForm
from players.selectors import profile_for_account, tokens_for_account
from players.services import profile_update, token_revoke


@login_required
@require_http_methods(["GET", "POST"])
def profile(request: HttpRequest) -> HttpResponse:
    current = profile_for_account(account=request.user)
    if request.method == "POST":
        form = ProfileForm(request.POST)
        if form.is_valid():
            try:
                profile_update(account=request.user, **form.cleaned_data)
            except ApplicationError as error:
                for field, field_errors in error.fields.items():
                    for message in field_errors:
                        form.add_error(field if field in form.fields else None, message)
            else:
                messages.success(request, "Your profile is saved.")
                return redirect("profile")
    else:
        form = ProfileForm(
            initial={
                "display_name": current.display_name,
                "avatar_url": current.avatar_url,
                "notify_on_first_blood": current.notify_on_first_blood,
                "notify_on_record_beaten": current.notify_on_record_beaten,
            }
        )
    return render(
        request,
        "players/profile.html",
        {"form": form, "profile": current, "tokens": tokens_for_account(account=request.user)},
    )


@login_required
@require_POST
def token_revoke_page(request: HttpRequest, token_id: int) -> HttpResponse:
    try:
        token_revoke(user=request.user, token_id=token_id)
    except NotFoundError:
        messages.error(request, "That token was already revoked or has expired.")
    else:
        messages.success(request, "The token is revoked; it no longer works.")
    return redirect("profile")
