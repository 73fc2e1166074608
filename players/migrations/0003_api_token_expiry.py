from datetime import timedelta

from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def tokens_without_expiry_expire(apps, schema_editor):
    # Tokens issued before expiry existed get the lifetime counted from their creation.
    ApiToken = apps.get_model("players", "ApiToken")
    ApiToken.objects.filter(expires_at__isnull=True).update(
        expires_at=F("created_at") + timedelta(days=getattr(settings, "API_TOKEN_TTL_DAYS", 30))
    )


class Migration(migrations.Migration):
    dependencies = [("players", "0002_site_name")]

    operations = [
        migrations.RunPython(tokens_without_expiry_expire, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apitoken", name="expires_at", field=models.DateTimeField()
        ),
    ]
