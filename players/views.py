from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ApplicationError, NotFoundError
from players.events import player_bracket_choose
from players.forms import ProfileForm, TokenForm, bracket_from_choice
from players.link_codes import end_user_unlink, link_code_create
from players.models import Workspace
from players.selectors import (
    bracket_places_of_account,
    linked_identities_for_account,
    profile_for_account,
    tokens_for_account,
    workspace_for_linking,
)
from players.services import end_user_for_account, profile_update, token_create, token_revoke


@login_required
@require_http_methods(["GET", "POST"])
def profile(request: HttpRequest) -> HttpResponse:
    current = profile_for_account(account=request.user)
    form = None  # a GET: the form shows the profile as it is (`_profile_page`)
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
    return _profile_page(request, form=form, profile=current)


def _profile_page(
    request: HttpRequest,
    *,
    form=None,
    profile=None,
    link_code=None,
    token_form=None,
    new_token=None,
):
    profile = profile or profile_for_account(account=request.user)
    if form is None:
        form = ProfileForm(initial=profile.editable_values())
    return render(
        request,
        "players/profile.html",
        {
            "form": form,
            "profile": profile,
            "tokens": tokens_for_account(account=request.user),
            "linked_identities": linked_identities_for_account(account=request.user),
            "workspaces": Workspace.objects.order_by("name"),
            "brackets": bracket_places_of_account(account=request.user),
            "new_link_code": link_code,
            "token_form": token_form or TokenForm(),
            # (ApiToken, its plain copy): shown this once, never stored in plain.
            "new_token": new_token,
        },
    )


@login_required
@require_POST
def link_code_create_page(request: HttpRequest) -> HttpResponse:
    try:
        workspace = workspace_for_linking(requested=request.POST.get("workspace", ""))
    except ApplicationError as error:
        messages.error(request, error.message)
        return redirect("profile")
    # Rendered, not redirected: the code is shown this once and never stored in plain.
    response = _profile_page(
        request, link_code=link_code_create(account=request.user, workspace=workspace)
    )
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def link_undo_page(request: HttpRequest, end_user_id: str) -> HttpResponse:
    try:
        end_user_unlink(account=request.user, end_user_id=end_user_id)
    except NotFoundError:
        messages.error(request, "That Dify identity is not linked to your account.")
    else:
        messages.success(request, "The link is undone; that Dify user plays as itself again.")
    return redirect("profile")


@login_required
@require_POST
def bracket_choose_page(request: HttpRequest) -> HttpResponse:
    bracket = bracket_from_choice(request.POST.get("bracket", ""))
    if bracket is None:
        messages.error(request, "Pick one of the brackets listed.")
        return redirect("profile")
    try:
        player_bracket_choose(
            end_user=end_user_for_account(workspace=bracket.workspace, account=request.user),
            bracket=bracket,
        )
    except ApplicationError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"You play in {bracket.workspace.name} as {bracket.name}.")
    return redirect("profile")


@login_required
@require_POST
def token_create_page(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _profile_page(request, token_form=form)
    # Rendered, not redirected: the token is shown this once.
    response = _profile_page(
        request, new_token=token_create(user=request.user, **form.cleaned_data)
    )
    response["Cache-Control"] = "no-store"
    return response


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
