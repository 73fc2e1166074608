"""Secret values never leave the server: every copy of a text or JSON value shown, stored
or handed to a plugin has them replaced first."""

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"


def redact_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every occurrence of each secret, in any letter case, replaced."""
    if not text:
        return text
    for secret in secrets:
        if secret:
            text = re.sub(re.escape(secret), REDACTED, text, flags=re.IGNORECASE)
    return text


def redact_secrets_in_json(value: Any, secrets: Iterable[str | None]) -> Any:
    """A copy of a JSON value with the secrets redacted from every string in it."""
    secrets = list(secrets)
    if isinstance(value, str):
        return redact_secrets(value, secrets)
    if isinstance(value, dict):
        return {key: redact_secrets_in_json(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_secrets_in_json(item, secrets) for item in value]
    return value
