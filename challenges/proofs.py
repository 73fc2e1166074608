"""The signed proof of a break (SPEC §10): its canonical form, the digest of a challenge's
configuration it names, and its verification. Plain functions over plain data, so the
page, the API, `verifyproof` and anyone outside with `cryptography` check it alike."""

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from challenges.models import Challenge

PROOF_FORMAT = "prompt-challenges/proof/v1"
CONFIG_FORMAT = "prompt-challenges/config/v1"
ALGORITHM = "Ed25519"

# What decides whether a prompt breaks a challenge: the target and its parameters, the
# defences, the evaluator and its judge. Names of secrets, never their values (and not the
# per-player word list either: it is what secrets are drawn from).
CONFIG_FIELDS = (
    "target",
    "target_model",
    "target_config",
    "system_prompt",
    "defences",
    "answer_mode",
    "success_type",
    "success_pattern",
    "secret_ref",
    "secret_per_player",
    "evaluator_type",
    "judge_config",
    "evaluator_plugin_id",
    "evaluator_entrypoint",
    "evaluator_config",
    # Fields later kinds of play add (SPEC §9, §10); absent or empty, they change nothing.
    "judge_panel",
    "targets",
    "target_assignment",
    "mode",
    "agent",
)


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8, no ASCII escaping: the bytes a proof signs."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def challenge_config(challenge: Challenge) -> dict[str, Any]:
    """The configuration a win is judged under; empty values are left out, so a field
    added later with an empty default keeps earlier digests."""
    config: dict[str, Any] = {"format": CONFIG_FORMAT}
    for name in CONFIG_FIELDS:
        value = getattr(challenge, name, None)
        if value not in (None, "", [], {}):
            config[name] = value
    return config


def challenge_config_sha256(challenge: Challenge) -> str:
    return hashlib.sha256(canonical_json(challenge_config(challenge))).hexdigest()


def public_key_id(raw_public_key: bytes) -> str:
    """A key's id: the first 16 bytes of the SHA-256 of its raw bytes, in hex."""
    return hashlib.sha256(raw_public_key).hexdigest()[:32]


@dataclass(frozen=True)
class Verification:
    valid: bool
    reason: str


def _decoded(text: Any, *, size: int, what: str) -> bytes:
    if not isinstance(text, str):
        raise ValueError(f"{what} is not a base64 string.")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{what} is not valid base64.") from None
    if len(raw) != size:
        raise ValueError(f"{what} is {len(raw)} bytes, not {size}.")
    return raw


def proof_verify(document: Any, public_keys: Mapping[str, str]) -> Verification:
    """Check a downloaded `{proof, signature, key_id}` against published keys
    (key_id → base64 of the raw public key)."""
    if not isinstance(document, Mapping):
        return Verification(False, "The file is not a JSON object.")
    missing = [name for name in ("proof", "signature", "key_id") if name not in document]
    if missing:
        return Verification(False, f"The file has no {', '.join(missing)}.")
    proof, key_id = document["proof"], document["key_id"]
    if not isinstance(proof, Mapping):
        return Verification(False, "'proof' is not a JSON object.")
    if proof.get("format") != PROOF_FORMAT:
        return Verification(False, f"'proof.format' is not {PROOF_FORMAT}.")
    if not isinstance(key_id, str) or key_id not in public_keys:
        return Verification(False, f"No published key has the id {key_id!r}.")
    try:
        public = _decoded(public_keys[key_id], size=32, what="The public key")
        signature = _decoded(document["signature"], size=64, what="The signature")
    except ValueError as error:
        return Verification(False, str(error))
    if public_key_id(public) != key_id:
        return Verification(False, f"The key id {key_id} is not the id of the key given.")
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, canonical_json(proof))
    except InvalidSignature:
        return Verification(
            False, f"The signature does not match this proof under key {key_id}: it was changed."
        )
    return Verification(True, f"Signed by key {key_id} (Ed25519); the proof is unchanged.")
