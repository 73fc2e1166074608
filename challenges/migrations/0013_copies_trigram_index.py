from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

# PostgreSQL only: the embedded default (SQLite) compares winning prompts in Python with
# the same trigram similarity (challenges/copies.py) and needs no index.
INDEX = "winning_prompt_text_trgm"


def index_create(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON challenges_winningprompt "
            "USING gin (text gin_trgm_ops)"
        )


def index_drop(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("challenges", "0012_copies"),
    ]

    operations = [
        TrigramExtension(),
        migrations.RunPython(index_create, index_drop, elidable=False),
    ]
