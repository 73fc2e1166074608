"""Secret values never leave the server: every copy of a text or JSON value shown, stored
or handed to a plugin has them replaced first."""

from collections.abc import Iterable
from typing import Any

from core.disguises import secret_sightings

REDACTED = "[redacted]"


def redact_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with each secret replaced wherever it shows: in any letter case or width
    (the check's normalisation) and in the simple disguises of core.disguises."""
    if not text:
        return text
    spans = sorted(
        (sighting.start, sighting.end)
        for secret in secrets
        if secret
        for sighting in secret_sightings(text, secret)
    )
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces = []
    position = 0
    for start, end in merged:
        pieces += [text[position:start], REDACTED]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


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
