"""Writes for a red/blue team challenge itself: its settings, checked in one place."""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core.errors import ApplicationError
from core.theme import theme_errors
from judging.category_judge import suite_errors
from judging.judge_config import judge_config_errors
from judging.judges import judge_panel_messages
from judging.plugins import SCORER_GROUP, plugin_find
from players.models import Workspace
from redblue.models import RedBlueChallenge, SelectionPolicy
from redblue.teams.agent import scenario_cleaned, scenario_errors

BANNED_TERMS_MAX = 100
BANNED_TERM_MAX_CHARS = 100


RED_BLUE_FIELDS = (
    "app_id",
    "workflow_id",
    "name",
    "description",
    "judge_suite",
    "defense_selection_policy",
    "attack_selection_policy",
    "scoring_strategy",
    "scoring_plugin_id",
    "scoring_entrypoint",
    "scoring_config",
    "theme",
    "instructions_md",
    "is_active",
    "target",
    "target_model",
    "judge_config",
    "judge_panel",
    "time_penalty_per_second",
    "token_penalty_per_1k",
    "pair_cooldown_seconds",
    "banned_terms",
    "sample_defense",
    "max_submissions_per_hour",
    "transcripts_published",
    "agent",
)


def red_blue_challenge_errors(challenge: RedBlueChallenge) -> dict[str, list[str]]:
    """Every problem with a challenge's settings, keyed by field (the admin shows them too)."""
    errors: dict[str, list[str]] = {}

    def add(field: str, messages: list[str] | str) -> None:
        if messages:
            errors.setdefault(field, []).extend(
                [messages] if isinstance(messages, str) else messages
            )

    if not (challenge.name or "").strip():
        add("name", "Give the challenge a name.")
    add("judge_suite", suite_errors(challenge.judge_suite))
    add("theme", theme_errors(challenge.theme))
    add(
        "judge_config",
        [m for ms in judge_config_errors(challenge.judge_config).values() for m in ms],
    )
    add("judge_panel", judge_panel_messages(challenge.judge_panel))
    for field in ("defense_selection_policy", "attack_selection_policy"):
        if getattr(challenge, field) not in SelectionPolicy.values:
            add(field, "Use one of: " + ", ".join(SelectionPolicy.values) + ".")
    if challenge.target not in RedBlueChallenge.Target.values:
        add("target", "Use offline or openai.")
    if challenge.target == RedBlueChallenge.Target.OPENAI and not challenge.target_model:
        add("target_model", "Name the model the 'openai' target runs.")
    terms = challenge.banned_terms
    if not isinstance(terms, list) or len(terms) > BANNED_TERMS_MAX:
        add("banned_terms", f"Banned terms are a list of at most {BANNED_TERMS_MAX} words.")
    elif any(
        not isinstance(term, str) or not term.strip() or len(term) > BANNED_TERM_MAX_CHARS
        for term in terms
    ):
        add("banned_terms", f"Each banned term is text of 1–{BANNED_TERM_MAX_CHARS} characters.")
    if challenge.scoring_strategy == RedBlueChallenge.Strategy.CUSTOM:
        found = plugin_find(
            SCORER_GROUP,
            plugin_id=challenge.scoring_plugin_id,
            entrypoint=challenge.scoring_entrypoint,
        )
        if found is None:
            add(
                "scoring_plugin_id",
                "Custom scoring needs an installed scorer plugin (scoring_plugin_id or "
                "scoring_entrypoint of the prompt_challenges.scorers group).",
            )
    if not isinstance(challenge.scoring_config, dict):
        add("scoring_config", "The scoring config must be an object.")
    if challenge.scoring_strategy not in RedBlueChallenge.Strategy.values:
        add("scoring_strategy", "Use red_blue_ratio or custom.")
    add("agent", scenario_errors(challenge.agent))
    if (
        challenge.agent is not None
        and challenge.scoring_strategy == RedBlueChallenge.Strategy.CUSTOM
    ):
        add("scoring_strategy", "An agent scenario is scored red_blue_ratio.")
    if challenge.transcripts_published and challenge.is_active:
        # A running challenge's attackers never read a defence (SPEC §4).
        add(
            "transcripts_published",
            "Transcripts are published only once the challenge has ended: close it "
            "(is_active false) first, and unpublish them before reopening it.",
        )
    return errors


def _validated(challenge: RedBlueChallenge) -> None:
    errors = red_blue_challenge_errors(challenge)
    if errors:
        raise ApplicationError(
            "Some fields are invalid: " + ", ".join(sorted(errors)) + ".", fields=errors
        )
    challenge.agent = scenario_cleaned(challenge.agent)


def _apply(challenge: RedBlueChallenge, changes: dict[str, Any]) -> None:
    unknown = set(changes) - set(RED_BLUE_FIELDS)
    if unknown:
        raise ApplicationError(
            "Unknown fields: " + ", ".join(sorted(unknown)) + ".",
            fields={name: ["Unknown field."] for name in unknown},
        )
    for name, value in changes.items():
        setattr(challenge, name, value)


def red_blue_challenge_create(
    *, workspace: Workspace, user: AbstractBaseUser | None, **fields: Any
) -> RedBlueChallenge:
    challenge = RedBlueChallenge(workspace=workspace, created_by=user, updated_by=user)
    _apply(challenge, fields)
    _validated(challenge)
    challenge.save()
    return challenge


def red_blue_challenge_update(
    *, challenge: RedBlueChallenge, user: AbstractBaseUser | None, **changes: Any
) -> RedBlueChallenge:
    _apply(challenge, changes)
    _validated(challenge)
    challenge.updated_by = user
    challenge.save()
    return challenge


def red_blue_challenge_delete(*, challenge: RedBlueChallenge) -> None:
    challenge.delete()
