from django import forms
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest

from players.models import PlayerProfile
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

    def signup(self, request: HttpRequest, user: AbstractBaseUser) -> None:
        from players.languages import interface_language_from_request
        from players.services import profile_create

        profile_create(
            account=user,
            display_name=self.cleaned_data["name"],
            interface_language=interface_language_from_request(request),
        )


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
    interface_language = forms.ChoiceField(
        label="Interface language (also for mails)",
        choices=[("", "The site's default")] + list(settings.LANGUAGES),
        required=False,
    )
