"""The player's interface language: one of settings.LANGUAGES, used for their mails."""

from django.contrib.auth import get_user_model
from django.http import HttpRequest
from django.utils import translation

from players.models import PlayerProfile


def interface_language_from_request(request: HttpRequest) -> str:
    """The offered language that best matches the request's Accept-Language (or language
    cookie), else the site's default."""
    return translation.get_language_from_request(request, check_path=False)


def interface_language_for_email(*, email: str) -> str:
    """The interface language of the account using `email`; "" when none is known."""
    account = get_user_model().objects.filter(email__iexact=email.strip()).first()
    if account is None:
        return ""
    language = (
        PlayerProfile.objects.filter(account=account)
        .values_list("interface_language", flat=True)
        .first()
    )
    return language or ""
