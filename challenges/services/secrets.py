"""Secrets: write-only values a challenge names and the server fills in."""

import base64
import hashlib
import hmac
import re

from django.conf import settings
from django.db import IntegrityError, transaction

from challenges.models import Challenge, Secret
from challenges.validation import SECRET_PLACEHOLDER
from core.errors import ApplicationError
from players.models import Workspace

# A per-player token carries 60 bits of HMAC output: two players share one only if the
# HMAC collides, which a collection of any size will not see (SPEC §4c). A word list alone
# cannot keep players apart, so a drawn word always gets an 8-character suffix (40 bits).
_TOKEN_CHARS = 12
_WORD_SUFFIX_CHARS = 8


def player_secret(*, challenge: Challenge, player_key: str) -> str:
    """The secret of one player for a `secret_per_player` challenge, derived, never stored.

    `player_key` is the EndUser's external_id (`account:<id>` for the web, the Dify user
    for the bridge), so both paths give a player the same value.
    """
    message = f"phc-secret-per-player:{challenge.id}:{player_key}".encode()
    digest = hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).digest()
    token = base64.b32encode(digest).decode().rstrip("=")
    words = [word.strip() for word in (challenge.secret_words or "").splitlines() if word.strip()]
    if not words:
        return token[:_TOKEN_CHARS]
    word = words[int.from_bytes(digest[-4:], "big") % len(words)]
    return f"{word}-{token[:_WORD_SUFFIX_CHARS]}"


def secret_value_for(*, challenge: Challenge, end_user=None) -> str | None:
    """The secret `{{secret}}` stands for; with `secret_per_player`, that player's own."""
    if challenge.secret_per_player:
        if end_user is None:
            return None
        return player_secret(challenge=challenge, player_key=end_user.external_id)
    if not challenge.secret_ref:
        return None
    # One call evaluates, redacts and records: look the value up once per loaded challenge.
    cached = challenge.__dict__.get("_secret_value")
    if cached is not None and cached[0] == challenge.secret_ref:
        return cached[1]
    value = (
        Secret.objects.filter(workspace_id=challenge.workspace_id, name=challenge.secret_ref)
        .values_list("value", flat=True)
        .first()
    )
    challenge.__dict__["_secret_value"] = (challenge.secret_ref, value)
    return value


def fill_secret(text: str, secret: str | None, *, regex: bool = False) -> str:
    if secret is None:
        return text
    replacement = re.escape(secret) if regex else secret
    return SECRET_PLACEHOLDER.sub(lambda _: replacement, text)


_SECRET_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def secret_create(*, workspace: Workspace, name: str, value: str) -> Secret:
    if not _SECRET_NAME.match(name or ""):
        raise ApplicationError(
            "A secret name uses 1–100 letters, digits, '_', '-' or '.'.",
            fields={"name": ["Use 1–100 letters, digits, '_', '-' or '.'."]},
        )
    if not value:
        raise ApplicationError("A secret needs a value.", fields={"value": ["Required."]})
    try:
        with transaction.atomic():
            return Secret.objects.create(workspace=workspace, name=name, value=value)
    except IntegrityError:
        raise ApplicationError(
            f"A secret named '{name}' already exists in this workspace.",
            code="conflict",
            status=409,
            fields={"name": ["Already exists."]},
        ) from None


def secret_update(*, secret: Secret, value: str) -> Secret:
    if not value:
        raise ApplicationError("A secret needs a value.", fields={"value": ["Required."]})
    secret.value = value
    secret.save(update_fields=["value", "updated_at"])
    return secret


def secret_delete(*, secret: Secret) -> None:
    in_use = Challenge.objects.filter(workspace_id=secret.workspace_id, secret_ref=secret.name)
    if in_use.exists():
        names = ", ".join(in_use.values_list("name", flat=True)[:5])
        raise ApplicationError(
            f"The secret is used by: {names}. Change those challenges first.",
            code="conflict",
            status=409,
        )
    secret.delete()
