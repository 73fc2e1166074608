"""Recording an agent run (SPEC §9): the run, its steps and its attempt, in one transaction.

The run records a ChallengeAttempt through `attempt_record`, as every play does, so boards
(per target too), first blood, proofs, the copy check, budgets and the feed treat it as
any win or miss; the trace (`AgentRun`, `AgentStep`) hangs off that attempt. Texts are
masked as prompts and replies are.

The scenario's benign tasks run once per configuration: the run that ran them stores their
outcomes (`AgentBenignCheck`) and spends their use against the workspace and the challenge,
not the player, whose text they never read; later runs show the stored outcomes.
"""

import dataclasses
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from challenges.agents.loop import RunOutcome
from challenges.models import AgentBenignCheck, AgentRun, AgentStep, ChallengeAttempt
from challenges.selectors.agent_runs import BenignKey
from challenges.selectors.leaderboards import leaderboard_rank
from challenges.services.attempts import attempt_record
from challenges.services.budgets import budget_release, judge_use_priced, spend_settle
from challenges.services.proofs import proof_key_current
from core.redaction import redact_secrets, redact_secrets_in_json
from judging.verdicts import TokenUse, Verdict


@dataclass(frozen=True)
class AgentRunResult:
    run: AgentRun
    steps: list[AgentStep]
    attempt: ChallengeAttempt
    leaderboard_rank: int | None


@dataclass(frozen=True)
class BenignCheck:
    """The benign tasks as a run ran them, none being known for its configuration: their
    outcomes `[{task, passed}]` and what their model calls and tool checks used."""

    key: BenignKey
    benign: list[dict]
    tokens: int
    cost: Decimal | None
    check_usage: tuple[TokenUse, ...]


def _benign_check_store(*, plan, check: BenignCheck) -> None:
    """Keep the outcomes for later runs and spend their use as the creator's. Two runs that
    started before either was recorded both ran them: both pay, the first row stays."""
    challenge, meter = plan.challenge, plan.meter
    AgentBenignCheck.objects.bulk_create(
        [
            AgentBenignCheck(
                workspace_id=challenge.workspace_id,
                challenge=challenge,
                config_sha256=check.key.config_sha256,
                setting=check.key.setting,
                benign=check.benign,
                tokens_total=check.tokens,
                cost=check.cost,
            )
        ],
        ignore_conflicts=True,
    )
    if meter is None:
        return
    _, judge = judge_use_priced(
        verdict=Verdict(passed=False, check_usage=check.check_usage),
        workspace_id=challenge.workspace_id,
    )
    spend_settle(
        meter=dataclasses.replace(meter, hold_id=None),
        tokens=check.tokens,
        cost=check.cost,
        judge=judge,
        player=False,
    )


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
    benign_check: BenignCheck | None,
    source: str,
) -> AgentRunResult:
    """Write the attempt, the run and its steps atomically; settle the run's spend, and
    the benign tasks' when this run ran them (`benign_check`)."""
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
                benign_tokens=benign_check.tokens if benign_check else 0,
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
            if benign_check is not None:
                _benign_check_store(plan=plan, check=benign_check)
    finally:
        budget_release(meter)
    return AgentRunResult(
        run=run,
        steps=steps,
        attempt=attempt,
        leaderboard_rank=leaderboard_rank(challenge=challenge, end_user=end_user),
    )
