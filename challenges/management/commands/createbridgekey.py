"""Create a Dify bridge key for a workspace and print it once."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from challenges.services.bridge_keys import bridge_key_create
from players.models import Workspace


class Command(BaseCommand):
    help = (
        "Create a bridge key for WORKSPACE (name or slug). The key is shown once, alone on "
        "the last line of the output, so `| tail -1` captures it; only its hash is stored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, help="Workspace name or slug.")
        parser.add_argument("--name", default="", help="A label to recognise the key by.")

    def handle(self, *args: Any, workspace: str, name: str, **options: Any) -> None:
        wanted = (workspace or "").strip()
        found = None
        if wanted:
            found = (
                Workspace.objects.filter(name=wanted).first()
                or Workspace.objects.filter(slug=wanted).first()
            )
        if found is None:
            raise CommandError(f"No workspace is named '{wanted}' or has that slug.")
        key, raw = bridge_key_create(workspace=found, name=(name or "").strip()[:100])
        self.stdout.write(
            f"Created bridge key {key.prefix}… for workspace '{found.name}'. "
            "Store it now: it is not shown again."
        )
        self.stdout.write(raw)
