"""Secret values encrypted at rest: existing rows are encrypted while the column is still
plain text, then the column becomes an EncryptedTextField (same database type)."""

from django.db import migrations

import core.encryption


def encrypt_existing(apps, schema_editor):
    Secret = apps.get_model("challenges", "Secret")
    for pk, value in Secret.objects.values_list("pk", "value").iterator():
        Secret.objects.filter(pk=pk).update(value=core.encryption.encrypt_text(value))


def decrypt_existing(apps, schema_editor):
    Secret = apps.get_model("challenges", "Secret")
    for pk, token in Secret.objects.values_list("pk", "value").iterator():
        Secret.objects.filter(pk=pk).update(value=core.encryption.decrypt_text(token))


class Migration(migrations.Migration):
    dependencies = [
        ("challenges", "0003_bridge_and_collections"),
    ]

    operations = [
        migrations.RunPython(encrypt_existing, decrypt_existing),
        migrations.AlterField(
            model_name="secret",
            name="value",
            field=core.encryption.EncryptedTextField(),
        ),
    ]
