"""Arena identity (SpecArena auth mode): Ed25519-signed requests and HMAC session keys."""

import hashlib
import hmac
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_der_public_key
from django.conf import settings

PROTOCOL = "arena:v1"
TIMESTAMP_WINDOW_MS = 5 * 60 * 1000


class SignatureRefused(Exception):
    """A signed request that fails: the reason is safe to show the client."""


def now_ms() -> int:
    return int(time.time() * 1000)


def user_id_for(public_key_hex: str) -> str:
    # SpecArena hashes the hex text as sent, not the key bytes.
    return hashlib.sha256(public_key_hex.encode()).hexdigest()


def join_message(*, invite: str, timestamp: int) -> str:
    return f"{PROTOCOL}:join:{invite}:{timestamp}"


def user_update_message(*, timestamp: int) -> str:
    return f"{PROTOCOL}:user-update:{timestamp}"


def signature_verify(
    *, public_key_hex: str, signature_hex: str, timestamp: int, message: str
) -> None:
    if abs(now_ms() - timestamp) > TIMESTAMP_WINDOW_MS:
        raise SignatureRefused("Timestamp expired")
    try:
        key = load_der_public_key(bytes.fromhex(public_key_hex))
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("not an Ed25519 key")
        key.verify(bytes.fromhex(signature_hex), message.encode())
    except (ValueError, TypeError, InvalidSignature):
        raise SignatureRefused("Invalid signature") from None


def _secret() -> bytes:
    configured = settings.ARENA_SESSION_SECRET
    if configured:
        return configured.encode()
    return hmac.new(settings.SECRET_KEY.encode(), b"arena-session-keys", hashlib.sha256).digest()


def _session_mac(*, challenge_id: str, player_index: int) -> str:
    message = f"{PROTOCOL}:session:{challenge_id}:{player_index}".encode()
    return hmac.new(_secret(), message, hashlib.sha256).hexdigest()


def session_key_for(*, challenge_id: str, player_index: int) -> str:
    return f"s_{player_index}.{_session_mac(challenge_id=challenge_id, player_index=player_index)}"


def session_key_player_index(*, key: str, challenge_id: str) -> int | None:
    """The player position a session key stands for in this session, or None if forged."""
    prefix, _, mac = key.partition(".")
    if not prefix.startswith("s_") or not prefix[2:].isdigit() or not mac:
        return None
    player_index = int(prefix[2:])
    expected = _session_mac(challenge_id=challenge_id, player_index=player_index)
    return player_index if hmac.compare_digest(mac, expected) else None
