"""Reading agent runs: a player's own, their latest on a challenge, a run's steps."""

import uuid

from django.contrib.auth.models import AbstractBaseUser

from challenges.models import AgentRun, AgentStep, Challenge
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
