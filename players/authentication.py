from rest_framework import authentication, exceptions

from players.services import token_authenticate


class BearerTokenAuthentication(authentication.BaseAuthentication):
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
        user = token_authenticate(raw=parts[1])
        if user is None:
            raise exceptions.AuthenticationFailed("The token is invalid or has been revoked.")
        return (user, None)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'
