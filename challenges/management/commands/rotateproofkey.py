"""Give a workspace a new proof-signing key; the old one stays published."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from challenges.services.proofs import proof_key_rotate
from players.models import Workspace


class Command(BaseCommand):
    help = (
        "Retire WORKSPACE's proof-signing key and make a new one. Retired keys stay at "
        "/.well-known/prompt-challenges/keys, so every proof signed before still verifies."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", required=True, help="Workspace name or slug.")

    def handle(self, *args: Any, workspace: str, **options: Any) -> None:
        wanted = (workspace or "").strip()
        found = (
            Workspace.objects.filter(name=wanted).first()
            or Workspace.objects.filter(slug=wanted).first()
        )
        if found is None:
            raise CommandError(f"No workspace is named '{wanted}' or has that slug.")
        key = proof_key_rotate(workspace=found)
        self.stdout.write(f"Workspace '{found.name}' now signs proofs with key {key.key_id}.")
