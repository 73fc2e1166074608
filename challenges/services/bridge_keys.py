"""Bridge keys: created in the Standard Webhooks form, shown once, revoked."""

from django.utils import timezone

from challenges.bridge import signatures
from challenges.models import BridgeKey
from players.models import Workspace


def bridge_key_create(*, workspace: Workspace, name: str = "") -> tuple[BridgeKey, str]:
    """Create a key in the Standard Webhooks form and return it with its only plain copy."""
    raw = signatures.key_generate()
    key = BridgeKey.objects.create(
        workspace=workspace,
        name=name.strip()[:100],
        key_hash=signatures.key_hash(raw),
        prefix=raw[:12],
        secret_encrypted=signatures.key_encrypt(raw),
    )
    return key, raw


def bridge_key_revoke(*, key: BridgeKey) -> BridgeKey:
    BridgeKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db()
    return key
