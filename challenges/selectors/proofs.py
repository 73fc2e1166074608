"""Reads of proof keys (SPEC §10)."""

from django.db.models import QuerySet

from challenges.models import ProofKey


def proof_keys_published() -> QuerySet[ProofKey]:
    """Every key that ever signed, oldest first: retired keys keep earlier proofs verifiable.
    Only public parts are read."""
    return (
        ProofKey.objects.select_related("workspace")
        .only("key_id", "public_key", "retired_at", "created_at", "workspace__slug")
        .order_by("created_at", "key_id")
    )


def proof_public_keys() -> dict[str, str]:
    """key_id → base64 public key, for verifying."""
    return dict(ProofKey.objects.values_list("key_id", "public_key"))
