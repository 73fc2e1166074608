"""Reading agent runs: a player's own, their latest on a challenge, a run's steps, and the
benign tasks' outcomes already known for a configuration."""

import uuid
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.utils.crypto import salted_hmac

from challenges.models import AgentBenignCheck, AgentRun, AgentStep, Challenge
from challenges.proofs import canonical_json, challenge_config_sha256
from judging.targets import TargetConfig
from players.models import EndUser


def agent_run_of_player(*, run_id, account: AbstractBaseUser) -> AgentRun | None:
    """The run when `account` is its player; None for anyone else (they get a 404)."""
    try:
        found = uuid.UUID(str(run_id))
    except ValueError:
        return None
    if not account.is_authenticated:
        return None
    return (
        AgentRun.objects.select_related("challenge", "attempt")
        .filter(pk=found, end_user__account=account)
        .first()
    )


def agent_run_latest(*, challenge: Challenge, end_user: EndUser | None) -> AgentRun | None:
    if end_user is None:
        return None
    return (
        AgentRun.objects.select_related("attempt")
        .filter(challenge=challenge, end_user=end_user)
        .first()
    )


def agent_run_steps(*, run: AgentRun) -> list[AgentStep]:
    return list(AgentStep.objects.filter(run=run).order_by("index"))


@dataclass(frozen=True)
class BenignKey:
    """What a benign task's outcome depends on: the challenge's configuration (the digest
    its wins pin), and the target played with the agent's system prompt as sent."""

    config_sha256: str
    setting: str


def benign_key(
    *, challenge: Challenge, target_config: TargetConfig, system_prompt: str
) -> BenignKey:
    """The key of a run's benign tasks. The setting is keyed with the site's SECRET_KEY, as
    the system prompt may hold the player's secret: equal for equal settings in every
    process, and no way back to the secret."""
    setting = canonical_json(
        {
            "provider": target_config.provider,
            "model": target_config.model,
            "base_url": target_config.base_url,
            "options": target_config.options,
            "system_prompt": system_prompt,
        }
    )
    return BenignKey(
        config_sha256=challenge_config_sha256(challenge),
        setting=salted_hmac("agent-benign-setting", setting, algorithm="sha256").hexdigest(),
    )


def agent_benign_known(*, challenge: Challenge, key: BenignKey) -> list[dict] | None:
    """The benign tasks' outcomes `[{task, passed}]` of an earlier run under `key`, or None."""
    return (
        AgentBenignCheck.objects.filter(
            challenge=challenge, config_sha256=key.config_sha256, setting=key.setting
        )
        .values_list("benign", flat=True)
        .first()
    )
