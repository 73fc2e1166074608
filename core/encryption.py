"""Values kept encrypted at rest, so a database dump or a filter on the column reveals
nothing. Fernet with the keys of SECRET_ENCRYPTION_KEYS: the first encrypts, every one
decrypts, so keys rotate by putting a new key first and re-encrypting
(`manage.py rotatesecretkeys`) before the old one is dropped."""

import base64
import contextlib
import hashlib
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

# Without SECRET_ENCRYPTION_KEYS a key derived from SECRET_KEY is used; it stays the last
# one tried, so values written before keys were configured stay readable until rotated.
_FALLBACK_PREFIX = "secrets-at-rest:"


class UndecryptableValue(ImproperlyConfigured):
    """A stored value none of the configured keys opens (a key was dropped too early)."""


def _fernet(material: str) -> Fernet:
    # Any string serves as key material; it is stretched to the 32 bytes Fernet wants.
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(material.encode()).digest()))


@lru_cache(maxsize=8)
def _keyring(materials: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([_fernet(material) for material in materials])


def keyring() -> MultiFernet:
    materials = [key for key in settings.SECRET_ENCRYPTION_KEYS if key]
    # Django refuses to hand out an empty SECRET_KEY; the keys above may still do.
    with contextlib.suppress(ImproperlyConfigured):
        materials.append(_FALLBACK_PREFIX + settings.SECRET_KEY)
    if not materials:
        # No key at all: refuse rather than encrypt with a key anyone could derive.
        raise ImproperlyConfigured("Set SECRET_ENCRYPTION_KEYS (or SECRET_KEY) to store secrets.")
    return _keyring(tuple(dict.fromkeys(materials)))


def encrypt_text(value: str) -> str:
    return keyring().encrypt(value.encode()).decode()


def decrypt_text(token: str) -> str:
    try:
        return keyring().decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        raise UndecryptableValue(
            "A stored secret cannot be decrypted with SECRET_ENCRYPTION_KEYS; put back the "
            "key it was written with (anywhere after the first)."
        ) from None


class EncryptedTextField(models.TextField):
    """Text stored as a Fernet token. It cannot be filtered on (only `isnull`): any other
    lookup would compare guesses with the value."""

    holds_secret = True
    description = "Text encrypted at rest"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> str | None:
        return None if value is None else decrypt_text(value)

    def get_prep_value(self, value: Any) -> str | None:
        value = super().get_prep_value(value)
        return None if value is None else encrypt_text(value)

    def get_lookup(self, lookup_name: str):
        return super().get_lookup(lookup_name) if lookup_name == "isnull" else None

    def get_transform(self, lookup_name: str):
        return None

    def value_to_string(self, obj: models.Model) -> str:
        # Serialised copies (dumpdata) carry the token, never the value.
        value = self.value_from_object(obj)
        return "" if value is None else encrypt_text(value)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return keyring().decrypt(value.encode()).decode()
            except (InvalidToken, ValueError):
                return value
        return value
