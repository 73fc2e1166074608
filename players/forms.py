from django import forms
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from players.models import Bracket, PlayerProfile
from players.validators import validate_display_name


class SignupDetailsForm(forms.Form):
    """Extra sign-up fields; allauth builds its sign-up form on top (ACCOUNT_SIGNUP_FORM_CLASS)."""

    field_order = ["email", "name", "password1", "password2"]

    name = forms.CharField(
        label="Display name",
        max_length=PlayerProfile._meta.get_field("display_name").max_length,
        help_text="Shown on leaderboards.",
        validators=[validate_display_name],
    )

    bracket = forms.ChoiceField(
        label="Bracket",
        required=False,
        help_text="Optional: the bracket you play in at an event (you pick it once).",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        choices = bracket_choices()
        if choices:
            self.fields["bracket"].choices = [("", "None yet"), *choices]
        else:
            del self.fields["bracket"]

    def signup(self, request: HttpRequest, user: AbstractBaseUser) -> None:
        from players.events import player_bracket_choose
        from players.languages import interface_language_from_request
        from players.services import end_user_for_account, profile_create

        profile_create(
            account=user,
            display_name=self.cleaned_data["name"],
            interface_language=interface_language_from_request(request),
        )
        bracket = bracket_from_choice(self.cleaned_data.get("bracket") or "")
        if bracket is not None:
            end_user = end_user_for_account(workspace=bracket.workspace, account=user)
            player_bracket_choose(end_user=end_user, bracket=bracket)


def bracket_choices() -> list[tuple[str, str]]:
    """Every workspace's brackets as "<bracket id>" → "Workspace: Bracket"."""
    brackets = Bracket.objects.select_related("workspace").order_by(
        "workspace__name", "position", "name"
    )
    return [(str(bracket.id), f"{bracket.workspace.name}: {bracket.name}") for bracket in brackets]


def bracket_from_choice(value: str) -> Bracket | None:
    if not value:
        return None
    try:
        return Bracket.objects.select_related("workspace").filter(id=value).first()
    except (ValueError, ValidationError):
        return None


class ProfileForm(forms.Form):
    display_name = forms.CharField(
        max_length=PlayerProfile._meta.get_field("display_name").max_length,
        validators=[validate_display_name],
    )
    # A plain text field: the https-only rule lives in the service, shared with the API.
    avatar_url = forms.CharField(label="Avatar URL (https)", max_length=200, required=False)
    notify_on_first_blood = forms.BooleanField(
        label="Email me when a challenge I played is solved for the first time", required=False
    )
    notify_on_record_beaten = forms.BooleanField(
        label="Email me when someone beats my record", required=False
    )
    notify_on_waves = forms.BooleanField(
        label="Email me when a new wave of challenges opens where I play", required=False
    )
    share_attempts = forms.BooleanField(
        label="Share my attempts in public datasets (masked, under a pseudonym)",
        help_text="Off unless you turn it on. Organisers may then publish every attempt you "
        "make (prompts and replies, secrets masked) under a pseudonym, never your name or "
        "email.",
        required=False,
    )
    interface_language = forms.ChoiceField(
        label="Interface language (also for mails)",
        choices=[("", "The site's default")] + list(settings.LANGUAGES),
        required=False,
    )


class TokenForm(forms.Form):
    """A new API token from the profile page; `agent` marks what it plays as an agent's."""

    name = forms.CharField(label="Name", max_length=100, help_text="What the token is for.")
    agent = forms.BooleanField(
        label="For an agent",
        required=False,
        help_text="Attempts made with it rank on the agents' boards, not on the people's.",
    )
