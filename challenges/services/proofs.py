"""Signed proofs of wins (SPEC §10): each workspace's Ed25519 key, and the one function
that issues a win's proof, whichever path recorded the win.

`attempt_record` issues it in the attempt's own transaction; a win the bridge lane records
in one SQL statement of its own gets it the first time anyone asks (`proof_for_id`), so
the lane's call does not wait for a signature. What the proof attests is fixed when the
attempt is built (`attempt_build`: the masked text, the configuration's digest, the time),
so a proof issued late says the same."""

import base64
import json
from datetime import UTC
from functools import lru_cache
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.db import IntegrityError, transaction
from django.utils import timezone

from challenges.models import AttemptOwnText, ChallengeAttempt, Proof, ProofKey, Review
from challenges.proofs import PROOF_FORMAT, canonical_json, public_key_id
from challenges.services.secrets import secret_value_for
from core.api import uuid_or_404
from core.errors import NotFoundError
from core.redaction import redact_secrets_in_json
from players.models import EndUser, Workspace


def _key_new(*, workspace_id: Any) -> ProofKey:
    private = Ed25519PrivateKey.generate()
    raw_public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    raw_private = private.private_bytes_raw()
    return ProofKey.objects.create(
        key_id=public_key_id(raw_public),
        workspace_id=workspace_id,
        public_key=base64.b64encode(raw_public).decode(),
        private_key=base64.b64encode(raw_private).decode(),
    )


def proof_key_current(*, workspace_id: Any) -> ProofKey:
    """The workspace's signing key, created the first time one is needed."""
    key = ProofKey.objects.filter(workspace_id=workspace_id, retired_at__isnull=True).first()
    if key is not None:
        return key
    try:
        with transaction.atomic():
            return _key_new(workspace_id=workspace_id)
    except IntegrityError:
        # Another process made the first key meanwhile (the one-current-key constraint).
        return ProofKey.objects.get(workspace_id=workspace_id, retired_at__isnull=True)


@transaction.atomic
def proof_key_rotate(*, workspace: Workspace) -> ProofKey:
    """Retire the current key and make a new one; retired keys stay published, so every
    proof signed before keeps verifying."""
    # The workspace row serialises rotations (and a first key made meanwhile).
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
    ProofKey.objects.filter(workspace=workspace, retired_at__isnull=True).update(
        retired_at=timezone.now()
    )
    return _key_new(workspace_id=workspace.pk)


@lru_cache(maxsize=256)
def _signer(key_id: str, encoded_private_key: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(base64.b64decode(encoded_private_key))


def _display_name(end_user: EndUser) -> str:
    """The name the player shows; a Dify user id is never published in a proof."""
    if end_user.display_name or end_user.source == "site":
        return end_user.public_name
    return "a Dify player"


def _transcript(attempt: ChallengeAttempt) -> list[dict[str, str]]:
    if attempt.prompt or attempt.response:
        return [
            {"role": "user", "content": attempt.prompt},
            {"role": "assistant", "content": attempt.response},
        ]
    # A right guess (SPEC §4c): the attempt keeps no text; the player's own copy holds the
    # guess, masked when it was recorded.
    own = AttemptOwnText.objects.filter(attempt=attempt).values_list("prompt", flat=True).first()
    return [{"role": "guess", "content": own or ""}]


def _verdicts(attempt: ChallengeAttempt) -> list[dict[str, Any]]:
    challenge = attempt.challenge
    evaluator = challenge.evaluator_type
    if challenge.answer_mode == challenge.AnswerMode.GUESS:
        evaluator = "guess"
    verdict: dict[str, Any] = {
        "evaluator": evaluator,
        "passed": attempt.succeeded,
        "rating": attempt.judge_rating,
        "feedback": attempt.judge_feedback,
    }
    if evaluator == challenge.EvaluatorType.LLM_JUDGE:
        verdict["model"] = (challenge.judge_config or {}).get("judge_model", "")
    judges = attempt.judges or []
    verdicts = [verdict]
    if len(judges) > 1:
        # A panel: each judge's own verdict (SPEC §10), the rule's in place of the one judge's.
        verdicts = [
            {"evaluator": "llm-judge", **{key: judge.get(key) for key in JUDGE_KEYS}}
            for judge in judges
        ]
    decision = (
        Review.objects.filter(attempt_id=attempt.id, decision=Review.Decision.PASS)
        .order_by("-decided_at")
        .values_list("kind", flat=True)
        .first()
    )
    if decision is not None:
        # A person passed it. Their reason stays out: a public proof, free text.
        verdicts.append({"evaluator": "review", "kind": decision, "passed": True})
    return verdicts


JUDGE_KEYS = ("model", "passed", "rating", "feedback")


def proof_document(*, attempt: ChallengeAttempt) -> dict[str, Any]:
    """What a win's proof attests, secrets masked (`attempt.challenge` and
    `attempt.end_user` loaded)."""
    challenge = attempt.challenge
    won_at = attempt.created_at.astimezone(UTC)
    document = {
        "format": PROOF_FORMAT,
        "id": str(attempt.id),
        "challenge": {
            "id": str(challenge.id),
            "slug": challenge.slug,
            "name": challenge.name,
            "workspace": challenge.workspace.slug,
        },
        "transcript": _transcript(attempt),
        "config_sha256": attempt.config_sha256,
        "verdicts": _verdicts(attempt),
        "tokens_total": attempt.tokens_total,
        "elapsed_ms": attempt.elapsed_ms,
        "won_at": won_at.isoformat().replace("+00:00", "Z"),
        "display_name": _display_name(attempt.end_user),
    }
    # The text was masked when the attempt was built; masking again costs nothing and
    # keeps a proof clean whatever the path that recorded it.
    secret = secret_value_for(challenge=challenge, end_user=attempt.end_user)
    return redact_secrets_in_json(document, [secret])


def proof_issue(*, attempt: ChallengeAttempt, key: ProofKey | None = None) -> Proof:
    """Sign and store the proof of a win, once: a second call returns the first proof."""
    if not (attempt.succeeded and attempt.config_sha256):
        raise ValueError("Only a win recorded with its configuration has a proof.")
    key = key or proof_key_current(workspace_id=attempt.workspace_id)
    payload = canonical_json(proof_document(attempt=attempt))
    signature = _signer(key.key_id, key.private_key).sign(payload)
    proof = Proof(
        attempt=attempt,
        workspace_id=attempt.workspace_id,
        key=key,
        payload=payload.decode(),
        signature=base64.b64encode(signature).decode(),
    )
    try:
        with transaction.atomic():
            proof.save(force_insert=True)
    except IntegrityError:
        return Proof.objects.select_related("key").get(pk=attempt.pk)
    return proof


def proof_issue_for_attempt(*, attempt_id: Any) -> Proof | None:
    """The proof of a win recorded outside `attempt_record` (the bridge lane); None when
    the attempt is no win with a proof to give."""
    existing = Proof.objects.select_related("key").filter(pk=attempt_id).first()
    if existing is not None:
        return existing
    attempt = (
        ChallengeAttempt.objects.select_related("challenge__workspace", "end_user")
        .filter(pk=attempt_id, succeeded=True)
        .exclude(config_sha256="")
        .first()
    )
    return proof_issue(attempt=attempt) if attempt is not None else None


def proof_for_id(*, proof_id: Any) -> Proof:
    """The proof with that id (a winning attempt's id), issued now if its win's recording
    stopped short of it; NotFoundError for anything else."""
    proof = proof_issue_for_attempt(attempt_id=uuid_or_404(proof_id))
    if proof is None:
        raise NotFoundError("No proof with that id.")
    return proof


def proof_download(proof: Proof) -> dict[str, Any]:
    """`{proof, signature, key_id}`: what `GET /web/api/proofs/{id}` answers and
    `verifyproof` reads."""
    return {
        "proof": json.loads(proof.payload),
        "signature": proof.signature,
        "key_id": proof.key_id,
    }
