"""Read an event file (from exportchallenges) into a workspace, all or nothing."""

import getpass
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import ApplicationError
from redblue.porting.document import EventFileInvalid, event_parse
from redblue.porting.exporting import workspace_for_operator
from redblue.porting.importing import (
    event_check,
    event_import,
    event_secrets_missing,
    secret_values_parse,
)


class Command(BaseCommand):
    help = (
        "Create or update what FILE holds in WORKSPACE in one transaction: nothing is "
        "written when any entry is refused (each problem is shown with its line). Secret "
        "values come from --secrets (YAML: name: value); missing ones are asked for, or "
        "with --no-input made with a fresh random value (their names are printed)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The event file (YAML), or - for standard input.")
        parser.add_argument("--workspace", required=True, help="Workspace name or slug.")
        parser.add_argument("--secrets", help="A YAML file of secret name: value.")
        parser.add_argument(
            "--no-input",
            action="store_false",
            dest="interactive",
            help="Never ask: a secret with no value gets a fresh random one.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = workspace_for_operator(options["workspace"])
        if workspace is None:
            raise CommandError(
                f"No workspace is named '{options['workspace']}' or has that slug "
                "(createcreator --workspace NAME creates one)."
            )
        name = options["file"]
        document = self._parsed(name, lambda: event_parse(self._read(name)))
        self._parsed(name, lambda: event_check(document))
        values: dict[str, str] = {}
        if options["secrets"]:
            path = options["secrets"]
            values = self._parsed(path, lambda: secret_values_parse(self._read(path)))
        if options["interactive"]:
            missing = event_secrets_missing(
                workspace=workspace, document=document, secret_values=values
            )
            for secret in missing:
                try:
                    values[secret] = getpass.getpass(
                        f"Value for the secret '{secret}' (empty: a random one): "
                    )
                except EOFError:
                    raise CommandError(
                        f"No value for the secret '{secret}' and nobody to ask: pass "
                        "--secrets FILE, or --no-input for random values."
                    )
        summary = self._parsed(
            name,
            lambda: event_import(
                workspace=workspace,
                document=document,
                user=None,
                secret_values=values,
            ),
        )
        self._report(summary.as_dict(), workspace.name)

    def _read(self, name: str) -> str:
        if name == "-":
            return sys.stdin.read()
        try:
            return Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {name}: {error}")

    def _parsed(self, name: str, step: Any) -> Any:
        try:
            return step()
        except EventFileInvalid as invalid:
            for problem in invalid.problems:
                line = f"{problem.line}:" if problem.line else ""
                self.stderr.write(f"{name}:{line} {problem.where()}: {problem.message}")
            raise CommandError(
                f"Nothing was imported: {len(invalid.problems)} problem(s) in {name}."
            )
        except ApplicationError as error:
            raise CommandError(f"Nothing was imported: {error.message}")

    def _report(self, summary: dict[str, Any], workspace: str) -> None:
        for verb in ("created", "updated"):
            for kind, keys in summary[verb].items():
                if keys:
                    label = kind.replace("_", " ")
                    self.stdout.write(f"{verb} {len(keys)} {label}: {', '.join(keys)}")
        for secret in summary["secrets_generated"]:
            self.stdout.write(f"secret '{secret}' was given a random value")
        self.stdout.write(f"Imported into workspace '{workspace}'.")
