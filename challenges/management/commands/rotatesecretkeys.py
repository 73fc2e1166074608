"""Re-encrypt every value kept encrypted at rest with the first of SECRET_ENCRYPTION_KEYS.

Rotation: put the new key first (`SECRET_ENCRYPTION_KEYS=new,old`), deploy, run this
command, then drop the old key.
"""

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import transaction

from core.encryption import EncryptedTextField

_BATCH = 500


class Command(BaseCommand):
    help = "Re-encrypt every secret value with the first key of SECRET_ENCRYPTION_KEYS."

    def handle(self, *args, **options) -> None:
        total = 0
        for model in apps.get_models():
            names = [
                field.name
                for field in model._meta.concrete_fields
                if isinstance(field, EncryptedTextField)
            ]
            if names:
                total += self._reencrypt(model, names)
        self.stdout.write(f"Re-encrypted {total} value(s) with the first key.")

    def _reencrypt(self, model, names: list[str]) -> int:
        count = 0
        with transaction.atomic():
            # Reading decrypts with any key; saving encrypts with the first one.
            rows = model._default_manager.select_for_update().only("pk", *names)
            for row in rows.iterator(chunk_size=_BATCH):
                model._default_manager.filter(pk=row.pk).update(
                    **{name: getattr(row, name) for name in names}
                )
                count += 1
        return count
