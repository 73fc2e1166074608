from allauth.account.adapter import DefaultAccountAdapter
from django.http import HttpRequest

from core.ratelimit import client_ip


class AccountAdapter(DefaultAccountAdapter):
    """allauth's adapter with our one rule for who the client is (TRUSTED_PROXIES)."""

    def get_client_ip(self, request: HttpRequest) -> str:
        # allauth keys its login and sign-up limits on this address.
        return client_ip(request)
