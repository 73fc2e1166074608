"""Running one pairing: the target with the defence as system prompt and the attack as the
user message, then the judge suite and the points. No database work happens here, so
callers run it with no transaction open and (in async views) no connection held."""

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from judging.category_judge import (
    SuiteVerdict,
    effective_suite,
    judge_suite_run,
    offline_team_reply,
)
from judging.targets import TargetConfig, TargetError, TargetReply, complete
from redblue.models import RedBlueChallenge
from redblue.teams.scoring import PairingPoints, pairing_points

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PairingOutcome:
    reply: TargetReply
    verdict: SuiteVerdict
    points: PairingPoints | None  # None for a self-test: shown, never scored

    def judge_output_raw(self) -> dict[str, Any]:
        return {
            **self.verdict.details,
            "judge_elapsed_ms": self.verdict.elapsed_ms,
            "categories": {
                verdict.code: {
                    "breached": verdict.breached,
                    "rating": verdict.rating,
                    "failed": verdict.failed,
                    "feedback": verdict.feedback,
                }
                for verdict in self.verdict.categories
            },
            "points": self.points.details if self.points else None,
        }


def target_reply(
    *, challenge: RedBlueChallenge, attack: str, defense: str, user: str
) -> TargetReply:
    if challenge.target == RedBlueChallenge.Target.OPENAI:
        return complete(
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


def pairing_evaluate(
    *, challenge: RedBlueChallenge, attack: str, defense: str, user: str = "", scored: bool = True
) -> PairingOutcome:
    """Raises TargetError when the target did not answer; judge failures are in the verdict."""
    reply = target_reply(challenge=challenge, attack=attack, defense=defense, user=user)
    verdict = judge_suite_run(
        suite=list(challenge.judge_suite),
        attack=attack,
        response=reply.text,
        config=challenge.judge_config,
    )
    points = None
    if scored:
        points = pairing_points(
            challenge=challenge,
            verdict=verdict,
            attack=attack,
            defense=defense,
            tokens_total=reply.tokens_total,
            elapsed_ms=reply.elapsed_ms,
        )
    return PairingOutcome(reply=reply, verdict=verdict, points=points)


__all__ = ["PairingOutcome", "TargetError", "pairing_evaluate", "target_reply"]
