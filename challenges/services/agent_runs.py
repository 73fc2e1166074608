"""Recording an agent run (SPEC §9): the run, its steps and its attempt, in one transaction.

The run records a ChallengeAttempt through `attempt_record`, as every play does, so boards
(per target too), first blood, proofs, the copy check, budgets and the feed treat it as
any win or miss; the trace (`AgentRun`, `AgentStep`) hangs off that attempt. Texts are
masked as prompts and replies are.
"""

import dataclasses
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from challenges.agents.loop import RunOutcome
from challenges.models import AgentRun, AgentStep, ChallengeAttempt
from challenges.selectors.leaderboards import leaderboard_rank
from challenges.services.attempts import attempt_record
from challenges.services.budgets import budget_release, spend_settle
from challenges.services.proofs import proof_key_current
from core.redaction import redact_secrets, redact_secrets_in_json
from judging.verdicts import Verdict


@dataclass(frozen=True)
class AgentRunResult:
    run: AgentRun
    steps: list[AgentStep]
    attempt: ChallengeAttempt
    leaderboard_rank: int | None


def slots_prompt(slots: dict[str, str]) -> str:
    """The player's text as the attempt keeps it: one slot's text, or each under its name."""
    written = {name: text for name, text in slots.items() if text}
    if len(written) == 1:
        return next(iter(written.values()))
    return "\n\n".join(f"[{name}]\n{text}" for name, text in written.items())


def agent_run_record(
    *,
    plan,
    slots: dict[str, str],
    outcome: RunOutcome,
    benign: list[dict],
    benign_tokens: int,
    benign_cost: Decimal | None,
    source: str,
) -> AgentRunResult:
    """Write the attempt, the run and its steps atomically; settle the run's spend."""
    challenge, end_user, meter = plan.challenge, plan.end_user, plan.meter
    secrets = [plan.secret]
    prompt = slots_prompt(slots)
    # The llm_tool_check layers' judge calls are the attempt's judge use (tokens, cost, spend).
    verdict = Verdict(
        passed=outcome.won, feedback=outcome.why, check_usage=tuple(outcome.check_usage)
    )
    try:
        if outcome.won:
            # Made before the transaction, as attempt_record does for its own.
            proof_key_current(workspace_id=challenge.workspace_id)
        with transaction.atomic():
            attempt = attempt_record(
                challenge=challenge,
                end_user=end_user,
                verdict=verdict,
                prompt=prompt,
                response=outcome.final_answer,
                tokens_total=outcome.tokens_total,
                elapsed_ms=outcome.elapsed_ms,
                source=source,
                own_text=(prompt, outcome.final_answer),
                cost=outcome.cost,
                meter=meter,
                codename=plan.codename,
            )
            run = AgentRun.objects.create(
                workspace_id=challenge.workspace_id,
                challenge=challenge,
                end_user=end_user,
                attempt=attempt,
                codename=plan.codename,
                slots={name: redact_secrets(text, secrets) for name, text in slots.items()},
                succeeded=outcome.won,
                stop_reason=outcome.stop_reason,
                why=outcome.why,
                final_answer=redact_secrets(outcome.final_answer, secrets),
                tokens_total=outcome.tokens_total,
                cost=outcome.cost,
                elapsed_ms=outcome.elapsed_ms,
                benign=benign,
                benign_tokens=benign_tokens,
            )
            steps = AgentStep.objects.bulk_create(
                AgentStep(
                    run=run,
                    index=index,
                    kind=step.kind,
                    tool=step.tool,
                    args=redact_secrets_in_json(step.args, secrets)
                    if step.args is not None
                    else None,
                    content=redact_secrets(step.content, secrets),
                    refused_by=step.refused_by,
                    tokens_total=step.tokens_total,
                    cost=step.cost,
                    elapsed_ms=step.elapsed_ms,
                )
                for index, step in enumerate(outcome.steps, start=1)
            )
            if meter is not None and (benign_tokens or benign_cost):
                # The benign tasks' model calls are spent too (their hold went with the run's).
                spend_settle(
                    meter=dataclasses.replace(meter, hold_id=None),
                    tokens=benign_tokens,
                    cost=benign_cost,
                )
    finally:
        budget_release(meter)
    return AgentRunResult(
        run=run,
        steps=steps,
        attempt=attempt,
        leaderboard_rank=leaderboard_rank(challenge=challenge, end_user=end_user),
    )
