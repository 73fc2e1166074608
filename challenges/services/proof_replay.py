"""Re-running a proof's break against the configuration it names (`manage.py replayproof`).

Only a deterministic target can confirm a break by running it again: the built-in offline
model, judged by rules, a plugin or the offline judge. Any other target (an
OpenAI-compatible model, a Dify app) or a remote LLM judge answers differently from run to
run, and a bridge win's reply came from the creator's Dify workflow, outside the platform:
those are refused, saying why, and nothing is run."""

from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync

from challenges.models import Challenge, Proof
from challenges.proofs import challenge_config_sha256, proof_verify
from challenges.selectors.proofs import proof_public_keys
from challenges.services.play import target_config_for
from challenges.services.secrets import fill_secret, secret_value_for
from challenges.services.try_it import TryItPlan, try_it_run
from challenges.targets import Target, revealed_targets, roster, target_named
from core.errors import ApplicationError
from core.redaction import REDACTED, redact_secrets
from judging.llm_judge import judge_route


@dataclass(frozen=True)
class Replay:
    # confirmed | denied | changed | refused | invalid
    outcome: str
    message: str
    reply: str = ""

    @property
    def confirmed(self) -> bool:
        return self.outcome == "confirmed"


def _played_target(challenge: Challenge, proof: Proof) -> Target:
    """The target the win was made against (one of several, by its codename)."""
    try:
        return target_named(challenge, proof.attempt.codename)
    except ApplicationError:
        return roster(challenge)[0]


def _not_deterministic(challenge: Challenge, proof: Proof) -> str | None:
    """Why a replay of this win could not confirm anything, or None."""
    if proof.attempt.source == "bridge":
        return (
            "the winning reply came from a Dify workflow through the bridge, not from a "
            "target the platform runs"
        )
    if challenge.answer_mode == Challenge.AnswerMode.GUESS:
        return "it is a right guess; the secret the player typed is masked in the proof"
    target = _played_target(challenge, proof)
    if target.target != Challenge.Target.OFFLINE:
        if target.codename and revealed_targets(challenge) is None:
            # Several targets, not revealed: the codename only (challenges/targets.py).
            return f"the target '{target.codename}' is a model whose replies vary from run to run"
        model = f" ({target.target_model})" if target.target_model else ""
        return f"the target is '{target.target}'{model}, whose replies vary from run to run"
    if challenge.evaluator_type == Challenge.EvaluatorType.LLM_JUDGE:
        provider = str((challenge.judge_config or {}).get("judge_model", "")).partition("/")[0]
        if judge_route(provider=provider) != "offline":
            return "the verdict comes from an LLM judge whose ratings vary from run to run"
    return None


def proof_replay(*, document: Any) -> Replay:
    """Verify the proof, check its challenge still has the configuration it names, run the
    winning prompt again and judge the reply as a player's would be."""
    verification = proof_verify(document, proof_public_keys())
    if not verification.valid:
        return Replay("invalid", f"The proof does not verify: {verification.reason}")
    stored = (
        Proof.objects.select_related("attempt__end_user", "attempt__challenge")
        .filter(pk=document["proof"].get("id"))
        .first()
    )
    if stored is None:
        return Replay("invalid", "This server holds no proof with that id.")
    attempt, challenge = stored.attempt, stored.attempt.challenge
    pinned = document["proof"].get("config_sha256")
    now = challenge_config_sha256(challenge)
    if now != pinned:
        return Replay(
            "changed",
            f"The challenge '{challenge.slug}' changed since the win: its configuration hashes "
            f"to {now} now, not {pinned}. The break cannot be replayed against the "
            "configuration it was made under.",
        )
    why_not = _not_deterministic(challenge, stored)
    if why_not:
        return Replay("refused", f"Not replayed: {why_not}. Only the offline target replays.")
    turns = {turn.get("role"): turn.get("content", "") for turn in document["proof"]["transcript"]}
    prompt = turns.get("user", "")
    secret = secret_value_for(challenge=challenge, end_user=attempt.end_user)
    plan = TryItPlan(
        challenge=challenge,
        secret=secret,
        system_prompt=fill_secret(challenge.system_prompt, secret),
        target=target_config_for(challenge=challenge, target=_played_target(challenge, stored)),
    )
    result = async_to_sync(try_it_run)(plan=plan, prompt=prompt)
    reply = redact_secrets(result.reply, [secret])
    same = " (the same reply as the proof's)" if reply == turns.get("assistant") else ""
    masked_note = (
        " The proof's prompt had a masked part, replayed as the mask." if REDACTED in prompt else ""
    )
    if result.passed:
        return Replay(
            "confirmed",
            f"Confirmed: the winning prompt breaks '{challenge.slug}' again under the pinned "
            f"configuration{same}.{masked_note}",
            reply,
        )
    reason = result.error or result.defence_fired or result.feedback or "the verdict is a fail"
    return Replay(
        "denied",
        f"Denied: replayed under the pinned configuration, the prompt does not win ({reason})."
        f"{masked_note}",
        reply,
    )
