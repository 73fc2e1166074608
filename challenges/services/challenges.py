"""Challenge CRUD: every field validated in one place before a save."""

from typing import Any

from celery import current_app
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from challenges.agents.schema import agent_clean
from challenges.models import Challenge, Secret
from challenges.services.budgets import fallback_target_valid
from challenges.services.copies import winning_prompts_fill
from challenges.targets import targets_clean
from challenges.validation import challenge_errors
from core.errors import changes_set, fields_invalid
from core.slugs import unique_slug
from players.models import Workspace

CHALLENGE_FIELDS = (
    "app_id",
    "workflow_id",
    "name",
    "slug",
    "description",
    "goal",
    "instructions_md",
    "theme",
    "success_type",
    "success_pattern",
    "secret_ref",
    "answer_mode",
    "secret_per_player",
    "secret_words",
    "defences",
    "scoring_strategy",
    "is_active",
    "system_prompt",
    "target",
    "target_model",
    "target_config",
    "evaluator_type",
    "judge_config",
    "judge_panel",
    "evaluator_plugin_id",
    "evaluator_entrypoint",
    "evaluator_config",
    "scoring_plugin_id",
    "scoring_entrypoint",
    "scoring_config",
    "max_attempts_per_hour",
    "starts_at",
    "ends_at",
    "mask_variables",
    "keep_failed_prompts",
    "copy_policy",
    "copy_threshold",
    "mode",
    "max_turns",
    "judge_scope",
    "session_token_budget",
    "agent",
    "targets",
    "target_assignment",
    "reveal_targets",
)
# Budgets (docs/budgets.md): set on the challenge, never carried in an event file.
BUDGET_FIELDS = (
    "budget_tokens",
    "budget_cost",
    "player_budget_tokens",
    "player_budget_cost",
    "fallback_target",
)
# The task is named, not imported: its module imports this one (challenges/apps.py loads it).
LEADERBOARD_REBUILD_TASK = "challenges.tasks.leaderboard_rebuild_task"


def _validated(challenge: Challenge, changes: dict[str, Any]) -> None:
    changes_set(challenge, changes, allowed=(*CHALLENGE_FIELDS, *BUDGET_FIELDS))
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
    if errors:
        raise fields_invalid(errors)
    challenge.targets = targets_clean(challenge.targets)
    challenge.agent = agent_clean(challenge.agent) if challenge.mode == Challenge.Mode.AGENT else {}


@transaction.atomic
def challenge_create(
    *, workspace: Workspace, user: AbstractBaseUser | None, **fields: Any
) -> Challenge:
    challenge = Challenge(workspace=workspace, created_by=user, updated_by=user)
    _validated(challenge, fields)
    if not challenge.slug:
        challenge.slug = unique_slug(model=Challenge, text=challenge.name, fallback="challenge")
    challenge.save()
    return challenge


@transaction.atomic
def challenge_update(
    *, challenge: Challenge, user: AbstractBaseUser | None, **fields: Any
) -> Challenge:
    previous_strategy = challenge.scoring_strategy
    checked_copies = challenge.copy_policy != Challenge.CopyPolicy.OFF
    _validated(challenge, fields)
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
