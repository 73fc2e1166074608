"""Writes for a red/blue team challenge itself: its settings, checked in one place."""

from decimal import Decimal
from typing import Any, TypedDict, Unpack

from django.contrib.auth.models import AbstractBaseUser

from core.services import model_update
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


class RedBlueChallengeFields(TypedDict, total=False):
    """What a create or an update may set (SPEC §4); `red_blue_challenge_errors` checks it."""

    app_id: str
    workflow_id: str
    name: str
    description: str
    judge_suite: list[Any]
    defense_selection_policy: str
    attack_selection_policy: str
    scoring_strategy: str
    scoring_plugin_id: str
    scoring_entrypoint: str
    scoring_config: dict[str, Any]
    theme: dict[str, Any]
    instructions_md: str
    is_active: bool
    target: str
    target_model: str
    judge_config: dict[str, Any]
    judge_panel: dict[str, Any] | None
    time_penalty_per_second: Decimal
    token_penalty_per_1k: Decimal
    pair_cooldown_seconds: int
    banned_terms: list[str]
    sample_defense: str
    max_submissions_per_hour: int
    transcripts_published: bool
    agent: dict[str, Any] | None


RED_BLUE_FIELDS = tuple(RedBlueChallengeFields.__annotations__)


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


def red_blue_challenge_create(
    *, workspace: Workspace, user: AbstractBaseUser | None, **fields: Unpack[RedBlueChallengeFields]
) -> RedBlueChallenge:
    challenge = RedBlueChallenge(workspace=workspace, created_by=user, updated_by=user)
    model_update(
        instance=challenge, data=fields, fields=RED_BLUE_FIELDS, errors=red_blue_challenge_errors
    )
    challenge.agent = scenario_cleaned(challenge.agent)
    challenge.save()
    return challenge


def red_blue_challenge_update(
    *,
    challenge: RedBlueChallenge,
    user: AbstractBaseUser | None,
    **changes: Unpack[RedBlueChallengeFields],
) -> RedBlueChallenge:
    model_update(
        instance=challenge, data=changes, fields=RED_BLUE_FIELDS, errors=red_blue_challenge_errors
    )
    challenge.agent = scenario_cleaned(challenge.agent)
    challenge.updated_by = user
    challenge.save()
    return challenge


def red_blue_challenge_delete(*, challenge: RedBlueChallenge) -> None:
    challenge.delete()
