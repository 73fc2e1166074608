from django.contrib.auth.models import AbstractBaseUser
from rest_framework import authentication, exceptions

from players.services import token_authenticate, tokens_revoke_all


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <token>`; `request.auth` is the ApiToken, so logout can revoke it."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode(errors="replace")
        parts = header.split()
        if not parts or parts[0].lower() != self.keyword.lower():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(
                "Send the token as 'Authorization: Bearer <token>'."
            )
        token = token_authenticate(raw=parts[1])
        if token is None:
            raise exceptions.AuthenticationFailed(
                "The token is invalid, expired or has been revoked."
            )
        return (token.user, token)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class RevokeApiTokensOnPasswordChange:
    """Listed in AUTH_PASSWORD_VALIDATORS for Django's `password_changed` hook, which runs
    after every saved `set_password`: a new password ends every API token, as it ends the
    other sessions. It refuses no password."""

    def validate(self, password: str, user: AbstractBaseUser | None = None) -> None:
        return None

    def password_changed(self, password: str, user: AbstractBaseUser | None = None) -> None:
        if user is not None and user.pk is not None:
            tokens_revoke_all(user=user)

    def get_help_text(self) -> str:
        return "Changing your password signs out every API token."
