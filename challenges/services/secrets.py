"""Secrets: write-only values a challenge names and the server fills in."""

import re

from django.db import IntegrityError, transaction

from challenges.models import Challenge, Secret
from challenges.validation import SECRET_PLACEHOLDER
from core.errors import ApplicationError
from players.models import Workspace


def secret_value_for(*, challenge: Challenge) -> str | None:
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
