"""Verify a downloaded proof of a break offline (SPEC §10)."""

import base64
import binascii
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from challenges.proofs import proof_verify, public_key_id
from challenges.selectors.proofs import proof_public_keys


def proof_file_read(path: str) -> Any:
    """The JSON of a downloaded proof; CommandError (exit 1) when it cannot be read."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise CommandError(f"Cannot read {path}: {error.strerror}.", returncode=1) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CommandError(f"{path} is not JSON: {error}.", returncode=1) from None


class Command(BaseCommand):
    help = (
        "Verify FILE, a proof downloaded from GET /web/api/proofs/{id} ({proof, signature, "
        "key_id}), against the keys this server published or against --key. Exits 0 when "
        "the signature holds, 1 (with the reason) when it does not."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The downloaded proof (JSON).")
        parser.add_argument(
            "--key",
            default="",
            help="Base64 of the raw 32-byte Ed25519 public key, instead of this server's keys.",
        )

    def handle(self, *args: Any, file: str, key: str, **options: Any) -> None:
        document = proof_file_read(file)
        if key:
            try:
                keys = {public_key_id(base64.b64decode(key, validate=True)): key}
            except (binascii.Error, ValueError):
                raise CommandError("--key is not valid base64.", returncode=1) from None
        else:
            keys = proof_public_keys()
        verification = proof_verify(document, keys)
        if not verification.valid:
            raise CommandError(f"INVALID: {verification.reason}", returncode=1)
        self.stdout.write(f"VALID: {verification.reason}")
