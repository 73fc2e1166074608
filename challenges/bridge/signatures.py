"""Bridge key material: the key's form, its hash, its encrypted copy, signature checks."""

import base64
import hashlib
import secrets
from datetime import UTC, datetime

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

KEY_PREFIX = "whsec_"
# A seen webhook-id is remembered a little longer than a timestamp stays acceptable
# (5 minutes either way), so a replay is refused by one check or the other.
SEEN_ID_SECONDS = 11 * 60


class SignatureError(Exception):
    pass


def key_generate() -> str:
    return KEY_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def key_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def _fernet() -> Fernet:
    material = settings.BRIDGE_ENCRYPTION_KEY or ("bridge-keys:" + settings.SECRET_KEY)
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(material.encode()).digest()))


def key_encrypt(raw: str) -> str:
    return _fernet().encrypt(raw.encode()).decode()


def key_decrypt(token: str) -> str | None:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        return None


def sign(*, raw_key: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The webhook-signature header value a sender puts on `body`."""
    moment = datetime.fromtimestamp(timestamp, tz=UTC)
    return Webhook(raw_key).sign(msg_id=msg_id, timestamp=moment, data=body.decode())


def signature_verify(*, raw_key: str, body: bytes, headers: dict[str, str]) -> None:
    """Raise SignatureError unless the headers sign `body` with `raw_key` within tolerance."""
    try:
        Webhook(raw_key).verify(body, headers, json_parse=False)
    except WebhookVerificationError as exc:
        raise SignatureError(str(exc)) from None
    except (ValueError, UnicodeDecodeError):
        # Malformed signature lists or non-base64 values are a bad signature, not a crash.
        raise SignatureError("Invalid signature headers") from None
