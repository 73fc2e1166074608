"""Re-run a proof's break against its pinned configuration (SPEC §10)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from challenges.management.commands.verifyproof import proof_file_read
from challenges.services.proof_replay import proof_replay

# Exit codes: 0 the break is confirmed, 1 it is not (or the proof is invalid, or the
# challenge changed), 2 it cannot be replayed (a target that is not deterministic).
EXIT_DENIED = 1
EXIT_REFUSED = 2


class Command(BaseCommand):
    help = (
        "Verify FILE (a downloaded proof), check that its challenge still has the "
        "configuration the proof names, re-run the winning prompt on the offline target and "
        "judge the reply. Exits 0 when the break is confirmed, 1 when it is not (invalid "
        "proof, changed challenge, no win), 2 when the target is not deterministic (refused)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The downloaded proof (JSON).")

    def handle(self, *args: Any, file: str, **options: Any) -> None:
        replay = proof_replay(document=proof_file_read(file))
        if replay.reply:
            self.stdout.write(f"Replayed reply (masked): {replay.reply}")
        if replay.outcome == "refused":
            raise CommandError(replay.message, returncode=EXIT_REFUSED)
        if not replay.confirmed:
            raise CommandError(replay.message, returncode=EXIT_DENIED)
        self.stdout.write(replay.message)
