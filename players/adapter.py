from allauth.account.adapter import DefaultAccountAdapter
from django.http import HttpRequest
from django.utils import translation

from core.ratelimit import client_ip
from players.languages import interface_language_for_email, interface_language_from_request


class AccountAdapter(DefaultAccountAdapter):
    """allauth's adapter with our one rule for who the client is (TRUSTED_PROXIES)."""

    def get_client_ip(self, request: HttpRequest) -> str:
        # allauth keys its login and sign-up limits on this address.
        return client_ip(request)

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        # In the account's interface language; for an address with no account yet, in the
        # language the request asked for.
        language = interface_language_for_email(email=email)
        request = context.get("request")
        if not language and request is not None:
            language = interface_language_from_request(request)
        if not language:
            return super().send_mail(template_prefix, email, context)
        with translation.override(language):
            return super().send_mail(template_prefix, email, context)
