"""Challenge CRUD: every field validated in one place before a save."""

from datetime import datetime
from decimal import Decimal
from typing import Any, TypedDict, Unpack

from celery import current_app
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from challenges.agents.schema import agent_clean
from challenges.models import Challenge, Secret
from challenges.services.budgets import fallback_target_valid
from challenges.services.copies import winning_prompts_fill
from challenges.targets import targets_clean
from challenges.validation import challenge_errors
from core.services import model_update
from core.slugs import unique_slug
from players.models import Workspace


class ChallengeFields(TypedDict, total=False):
    """A challenge's settings (SPEC §4), as an event file carries them; `challenge_errors`
    checks them."""

    app_id: str
    workflow_id: str
    name: str
    slug: str
    description: str
    goal: str
    instructions_md: str
    theme: dict[str, Any]
    success_type: str
    success_pattern: str
    secret_ref: str
    answer_mode: str
    secret_per_player: bool
    secret_words: str
    defences: list[Any]
    scoring_strategy: str
    is_active: bool
    system_prompt: str
    target: str
    target_model: str
    target_config: dict[str, Any]
    evaluator_type: str
    judge_config: dict[str, Any]
    judge_panel: dict[str, Any] | None
    evaluator_plugin_id: str
    evaluator_entrypoint: str
    evaluator_config: dict[str, Any]
    scoring_plugin_id: str
    scoring_entrypoint: str
    scoring_config: dict[str, Any]
    max_attempts_per_hour: int
    starts_at: datetime | None
    ends_at: datetime | None
    mask_variables: list[str]
    keep_failed_prompts: bool
    copy_policy: str
    copy_threshold: float
    mode: str
    max_turns: int
    judge_scope: str
    session_token_budget: int | None
    agent: dict[str, Any]
    targets: list[Any]
    target_assignment: str
    reveal_targets: bool


class BudgetFields(TypedDict, total=False):
    """Budgets (docs/budgets.md): set on the challenge, never carried in an event file."""

    budget_tokens: int | None
    budget_cost: Decimal | None
    player_budget_tokens: int | None
    player_budget_cost: Decimal | None
    fallback_target: str


class ChallengeWrite(ChallengeFields, BudgetFields, total=False):
    """What a create or an update may set."""


CHALLENGE_FIELDS = tuple(ChallengeFields.__annotations__)
BUDGET_FIELDS = tuple(BudgetFields.__annotations__)
# The task is named, not imported: its module imports this one (challenges/apps.py loads it).
LEADERBOARD_REBUILD_TASK = "challenges.tasks.leaderboard_rebuild_task"


def _challenge_errors_of(challenge: Challenge) -> dict[str, list[str]]:
    data = {name: getattr(challenge, name) for name in CHALLENGE_FIELDS}
    secrets = dict(
        Secret.objects.filter(workspace_id=challenge.workspace_id).values_list("name", "value")
    )
    errors = challenge_errors(data, secret_names=set(secrets), secret_values=secrets)
    if not fallback_target_valid(challenge.fallback_target or ""):
        errors.setdefault("fallback_target", []).append(
            "Use 'offline' or 'openai/<model>', or leave it empty to pause."
        )
    if challenge.slug:
        clash = Challenge.objects.filter(slug=challenge.slug).exclude(id=challenge.id)
        if clash.exists():
            errors.setdefault("slug", []).append("This slug is taken.")
    return errors


def _challenge_written(challenge: Challenge, data: ChallengeWrite) -> None:
    model_update(
        instance=challenge,
        data=data,
        fields=(*CHALLENGE_FIELDS, *BUDGET_FIELDS),
        errors=_challenge_errors_of,
    )
    challenge.targets = targets_clean(challenge.targets)
    challenge.agent = agent_clean(challenge.agent) if challenge.mode == Challenge.Mode.AGENT else {}


@transaction.atomic
def challenge_create(
    *, workspace: Workspace, user: AbstractBaseUser | None, **fields: Unpack[ChallengeWrite]
) -> Challenge:
    challenge = Challenge(workspace=workspace, created_by=user, updated_by=user)
    _challenge_written(challenge, fields)
    if not challenge.slug:
        challenge.slug = unique_slug(model=Challenge, text=challenge.name, fallback="challenge")
    challenge.save()
    return challenge


@transaction.atomic
def challenge_update(
    *, challenge: Challenge, user: AbstractBaseUser | None, **fields: Unpack[ChallengeWrite]
) -> Challenge:
    previous_strategy = challenge.scoring_strategy
    checked_copies = challenge.copy_policy != Challenge.CopyPolicy.OFF
    _challenge_written(challenge, fields)
    challenge.updated_by = user
    if not challenge.slug:
        challenge.slug = unique_slug(
            model=Challenge, text=challenge.name, fallback="challenge", exclude_id=challenge.id
        )
    challenge.save()
    if challenge.scoring_strategy != previous_strategy:
        # A board can hold 100k players: re-rank it in the background once committed.
        task = current_app.signature(LEADERBOARD_REBUILD_TASK, args=(str(challenge.id),))
        transaction.on_commit(task.delay)
    if not checked_copies and challenge.copy_policy != Challenge.CopyPolicy.OFF:
        winning_prompts_fill(challenge=challenge)
    return challenge


def challenge_delete(*, challenge: Challenge) -> None:
    challenge.delete()
