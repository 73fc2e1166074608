from django.core.exceptions import ImproperlyConfigured


def require_secret_key() -> None:
    """Refuse to serve or run jobs without a signing key, instead of failing per request."""
    from django.conf import settings

    try:
        settings.SECRET_KEY  # noqa: B018  (Django raises on an empty key)
    except ImproperlyConfigured:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off; see README.md, 'Running in production'."
        ) from None
