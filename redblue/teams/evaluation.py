"""Running one pairing: the target with the defence as system prompt and the attack as the
user message, then the judge suite and the points. No database work happens here, so
callers run it with no transaction open and (in async views) no connection held."""

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from core.threads import run_blocking
from judging.category_judge import (
    CategoryVerdict,
    SuiteVerdict,
    effective_suite,
    judge_suite_run_async,
    offline_team_reply,
)
from judging.targets import TargetConfig, TargetError, TargetReply, complete_async
from redblue.models import RedBlueChallenge
from redblue.teams.agent import agent_pairing_run_async, benign_ratio
from redblue.teams.scoring import PairingPoints, money, pairing_points

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PairingOutcome:
    reply: TargetReply
    verdict: SuiteVerdict
    # None for a self-test (shown, never scored) and for a pairing under review (scored
    # once a person decides).
    points: PairingPoints | None
    # An agent scenario's run (redblue/teams/agent.py `trace_of`); None for text pairings.
    trace: dict[str, Any] | None = None

    def judge_output_raw(self) -> dict[str, Any]:
        return judge_output_raw(self.verdict, points=self.points)


def judge_output_raw(verdict: SuiteVerdict, *, points: PairingPoints | None) -> dict[str, Any]:
    """What a pairing stores of its verdicts; `suite_verdict_stored` reads it back."""
    return {
        **verdict.details,
        "judge_elapsed_ms": verdict.elapsed_ms,
        "rating_scale": verdict.rating_scale,
        "categories": {
            category.code: {
                "breached": category.breached,
                "rating": category.rating,
                "failed": category.failed,
                "feedback": category.feedback,
                "under_review": category.under_review,
                "judges": list(category.judges),
            }
            for category in verdict.categories
        },
        "judge_tokens": sum(use.total for use in verdict.usage),
        "points": points.details if points else None,
    }


def suite_verdict_stored(raw: dict[str, Any]) -> SuiteVerdict:
    """The suite verdict a pairing stored (`judge_output_raw`), to score it later."""
    return SuiteVerdict(
        categories=tuple(
            CategoryVerdict(
                code=code,
                breached=stored["breached"],
                rating=stored["rating"],
                feedback=stored["feedback"],
                failed=stored["failed"],
                judges=tuple(stored.get("judges") or ()),
                under_review=stored.get("under_review", False),
            )
            for code, stored in raw["categories"].items()
        ),
        rating_scale=raw.get("rating_scale") or 10,
        elapsed_ms=raw.get("judge_elapsed_ms") or 0,
    )


async def target_reply_async(
    *, challenge: RedBlueChallenge, attack: str, defense: str, user: str
) -> TargetReply:
    if challenge.target == RedBlueChallenge.Target.OPENAI:
        return await complete_async(
            system_prompt=defense,
            prompt=attack,
            user=user,
            config=TargetConfig(
                provider="openai",
                model=challenge.target_model,
                base_url=settings.OPENAI_BASE_URL,
                api_key=settings.OPENAI_API_KEY,
                timeout_seconds=settings.TARGET_TIMEOUT_SECONDS,
                max_retries=settings.TARGET_MAX_RETRIES,
            ),
        )
    return offline_team_reply(
        defense=defense, attack=attack, suite=effective_suite(challenge.judge_suite)
    )


async def pairing_evaluate_async(
    *, challenge: RedBlueChallenge, attack: str, defense: str, user: str = "", scored: bool = True
) -> PairingOutcome:
    """Raises TargetError when the target did not answer; judge failures are in the verdict.
    The target and the judges are awaited; sync callers (the Celery tasks) use
    `async_to_sync`."""
    reply = await target_reply_async(challenge=challenge, attack=attack, defense=defense, user=user)
    verdict = await judge_suite_run_async(
        suite=list(challenge.judge_suite),
        attack=attack,
        response=reply.text,
        config=challenge.judge_config,
        panel=challenge.judge_panel or None,
    )
    points = None
    if scored and not verdict.under_review:
        # A custom scorer is a plugin in a sandbox subprocess: off the event loop.
        points = await run_blocking(
            pairing_points,
            challenge=challenge,
            verdict=verdict,
            attack=attack,
            defense=defense,
            tokens_total=reply.tokens_total,
            elapsed_ms=reply.elapsed_ms,
        )
    return PairingOutcome(reply=reply, verdict=verdict, points=points)


async def agent_pairing_evaluate_async(
    *,
    challenge: RedBlueChallenge,
    slots: dict[str, str],
    attack: str,
    defense: str,
    defences: list,
    benign: dict | None,
    user: str = "",
    scored: bool = True,
) -> PairingOutcome:
    """An agent scenario's pairing: the loop with Blue's system prompt (`defense`) and
    layers and Red's slots, judged by the win rule; Blue's points are scaled by the share
    of benign tasks its defence passes (`benign`, the defence's cached report). Raises
    TargetError when the model did not answer."""
    run = await agent_pairing_run_async(
        challenge=challenge, slots=slots, system_prompt=defense, defences=defences, user=user
    )
    points = None
    if scored:
        points = pairing_points(
            challenge=challenge,
            verdict=run.verdict,
            attack=attack,
            defense=defense,
            tokens_total=run.reply.tokens_total,
            elapsed_ms=run.reply.elapsed_ms,
        )
        ratio = benign_ratio(benign)
        points = PairingPoints(
            red=points.red,
            blue=money(points.blue * ratio),
            details={
                **points.details,
                "benign_ratio": float(ratio),
                "blue_before_benign": float(points.blue),
            },
        )
    return PairingOutcome(reply=run.reply, verdict=run.verdict, points=points, trace=run.trace)


async def pairing_run_async(
    *,
    challenge: RedBlueChallenge,
    attack: str,
    defense: str,
    slots: dict[str, str] | None,
    defences: list | None,
    benign: dict | None,
    user: str,
    scored: bool = True,
) -> PairingOutcome:
    """A pairing of either kind (the Celery tasks run it with `async_to_sync`). Raises
    TargetError when the model did not answer."""
    if challenge.agent is not None:
        return await agent_pairing_evaluate_async(
            challenge=challenge,
            slots=slots or {},
            attack=attack,
            defense=defense,
            defences=defences or [],
            benign=benign,
            user=user,
            scored=scored,
        )
    return await pairing_evaluate_async(
        challenge=challenge, attack=attack, defense=defense, user=user, scored=scored
    )


__all__ = [
    "PairingOutcome",
    "agent_pairing_evaluate_async",
    "TargetError",
    "judge_output_raw",
    "pairing_evaluate_async",
    "pairing_run_async",
    "suite_verdict_stored",
    "target_reply_async",
]
