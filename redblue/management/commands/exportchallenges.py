"""Write a workspace's challenges, collections and red/blue challenges as YAML."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ApplicationError
from redblue.porting.exporting import event_export, workspace_for_operator
from redblue.porting.schema import event_schema_text


class Command(BaseCommand):
    help = (
        "Print WORKSPACE's challenges (hints, prerequisites), collections, red/blue "
        "challenges, defences and themes "
        "as YAML (secrets by name only): `exportchallenges --workspace W > event.yaml`. "
        "`--schema` prints the file's JSON Schema instead (docs/import-export.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", help="Workspace name or slug.")
        parser.add_argument(
            "--schema", action="store_true", help="Print the event file's JSON Schema."
        )

    def handle(self, *args: Any, workspace: str | None, schema: bool, **options: Any) -> None:
        if schema:
            self.stdout.write(event_schema_text(), ending="")
            return
        found = workspace_for_operator(workspace or "")
        if found is None:
            raise CommandError(f"No workspace is named '{workspace or ''}' or has that slug.")
        try:
            self.stdout.write(event_export(workspace=found), ending="")
        except ApplicationError as error:
            raise CommandError(error.message)
