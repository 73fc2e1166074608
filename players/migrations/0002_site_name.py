from urllib.parse import urlsplit

from django.conf import settings
from django.db import migrations

SITE_NAME = "Prompt Hacking Challenges"


def name_the_site(apps, schema_editor):
    # allauth's mails greet with the site's name; Django's default is "example.com".
    Site = apps.get_model("sites", "Site")
    domain = urlsplit(settings.SITE_URL).netloc or "localhost"
    Site.objects.update_or_create(
        id=settings.SITE_ID, defaults={"name": SITE_NAME, "domain": domain[:100]}
    )


class Migration(migrations.Migration):
    dependencies = [
        ("players", "0001_initial"),
        ("sites", "0002_alter_domain_unique"),
    ]

    operations = [migrations.RunPython(name_the_site, migrations.RunPython.noop)]
