"""Checks a creator's challenge settings before they are saved; shared by API and admin."""

import re
from collections.abc import Mapping
from typing import Any

from challenges.agents.schema import agent_errors
from challenges.services.defences import agent_defence_errors, defence_errors
from challenges.targets import MAX_TARGETS, TargetEntrySerializer
from core.egress import url_refusal
from core.theme import theme_errors
from judging.judge_config import judge_config_messages
from judging.judges import judge_panel_messages
from judging.rules import PatternError, compile_pattern

SECRET_PLACEHOLDER = re.compile(r"\{\{\s*secret\s*\}\}")

# Stands in for a secret whose value is not known here: punctuation, so it is escaped.
_SAMPLE_SECRET = "Sample-Secret 1"
PATTERN_WITH_SECRET_INVALID = (
    "The pattern is not valid once {{secret}} is replaced by the secret's value; use "
    "{{secret}} only where literal text may stand (not in a group name, a range or a count)."
)


def pattern_error(pattern: str, *, secret: str | None = None) -> str | None:
    """Why a regex success pattern cannot be used, checked as written and as played.

    The filled-in pattern holds the secret, so RE2's own reason for it is never shown or
    logged: only that it fails.
    """
    try:
        compile_pattern(SECRET_PLACEHOLDER.sub("secret", pattern))
    except PatternError as exc:
        return str(exc)
    if not SECRET_PLACEHOLDER.search(pattern):
        return None
    for value in (_SAMPLE_SECRET, secret):
        if value is None:
            continue
        literal = re.escape(value)
        filled = SECRET_PLACEHOLDER.sub(lambda _, literal=literal: literal, pattern)
        try:
            compile_pattern(filled)
        except PatternError:
            return PATTERN_WITH_SECRET_INVALID
    return None


def target_config_errors(target: Any, target_config: Any) -> list[str]:
    """A Dify target's base_url goes through the egress guard before it is ever called."""
    if not isinstance(target_config, dict) or target != "dify":
        return []
    base_url = target_config.get("base_url")
    if not base_url:
        return ["A Dify target needs 'base_url', e.g. https://api.dify.ai."]
    refusal = url_refusal(base_url)
    return [f"'base_url': {refusal}"] if refusal else []


def targets_errors(targets: Any) -> list[str]:
    """Every problem with a challenge's `targets` list, as a creator reads them.

    Each entry's settings pass the same checks as the challenge's own target (a Dify
    `base_url` goes through the egress guard)."""
    if targets in (None, ""):
        return []
    if not isinstance(targets, list):
        return ["A list of {codename, target, target_model, target_config}."]
    if len(targets) > MAX_TARGETS:
        return [f"At most {MAX_TARGETS} targets."]
    errors: list[str] = []
    seen: set[str] = set()
    for number, entry in enumerate(targets, start=1):
        checked = TargetEntrySerializer(data=entry)
        if not isinstance(entry, dict) or not checked.is_valid():
            details = checked.errors if isinstance(entry, dict) else "must be an object"
            errors.append(f"Target {number}: {_flat(details)}")
            continue
        data = checked.validated_data
        key = data["codename"].casefold()
        if key in seen:
            errors.append(f"Target {number}: the codename '{data['codename']}' is used twice.")
        seen.add(key)
        for message in target_config_errors(data["target"], data.get("target_config") or {}):
            errors.append(f"Target {number} ({data['codename']}): {message}")
    return errors


def _flat(details: Any) -> str:
    if isinstance(details, dict):
        return "; ".join(f"{name}: {' '.join(map(str, msgs))}" for name, msgs in details.items())
    return str(details)


def _guard_hides_the_win(data: dict[str, Any], *, evaluator_type: str, pattern: str) -> bool:
    defences = data.get("defences") or []
    guarded = isinstance(defences, list) and any(
        isinstance(layer, dict) and layer.get("type") == "output_guard" for layer in defences
    )
    if data.get("success_type") == "regex" and re.search(r"[|?*]|\{0", pattern):
        return False  # a part of the pattern may match without the secret
    return (
        guarded
        and data.get("answer_mode", "output") == "output"
        and evaluator_type == "rules"
        and bool(SECRET_PLACEHOLDER.search(pattern))
    )


MAX_TURNS_CEILING = 100


def play_mode_errors(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The kind of play and its settings (SPEC §9)."""
    errors = []
    mode = data.get("mode", "single")
    if mode not in ("single", "conversation", "agent"):
        errors.append(("mode", "Must be 'single', 'conversation' or 'agent'."))
    if data.get("judge_scope", "turn") not in ("turn", "transcript"):
        errors.append(("judge_scope", "Must be 'turn' or 'transcript'."))
    max_turns = data.get("max_turns", 10)
    if type(max_turns) is not int or not 1 <= max_turns <= MAX_TURNS_CEILING:  # noqa: E721
        errors.append(("max_turns", f"A whole number from 1 to {MAX_TURNS_CEILING}."))
    budget = data.get("session_token_budget")
    if budget is not None and (type(budget) is not int or budget < 1):  # noqa: E721
        errors.append(("session_token_budget", "A positive whole number, or empty for none."))
    if mode == "conversation" and data.get("answer_mode", "output") == "guess":
        errors.append(("answer_mode", "A conversation judges the model's replies: use 'output'."))
    errors += _agent_errors(data, agent_mode=mode == "agent")
    return errors


def _agent_errors(data: dict[str, Any], *, agent_mode: bool) -> list[tuple[str, str]]:
    """An agent challenge's scenario, its defences and its targets (SPEC §9)."""
    agent = data.get("agent") or {}
    if not agent_mode:
        if agent:
            return [("agent", "A scenario belongs to an agent challenge: set mode to 'agent'.")]
        return [
            ("defences", message)
            for message in agent_defence_errors(
                data.get("defences") or [], agent_mode=False, tools={}
            )
        ]
    errors = [("agent", message) for message in agent_errors(agent)]
    tools = {}
    if isinstance(agent, dict) and isinstance(agent.get("tools"), list):
        for tool in agent["tools"]:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                properties = (
                    (tool.get("parameters") or {}).get("properties")
                    if isinstance(tool.get("parameters"), dict)
                    else None
                )
                tools[tool["name"]] = set(properties) if isinstance(properties, dict) else set()
    errors += [
        ("defences", message)
        for message in agent_defence_errors(
            data.get("defences") or [], agent_mode=True, tools=tools
        )
    ]
    if data.get("answer_mode", "output") == "guess":
        errors.append(("answer_mode", "An agent challenge is won by a tool call: use 'output'."))
    prompt = agent.get("system_prompt") if isinstance(agent, dict) else ""
    if (
        isinstance(prompt, str)
        and SECRET_PLACEHOLDER.search(prompt)
        and not (data.get("secret_ref") or data.get("secret_per_player"))
    ):
        errors.append(("secret_ref", "{{secret}} is used, so name the secret it stands for."))
    if data.get("target") == "dify" or any(
        isinstance(entry, dict) and entry.get("target") == "dify"
        for entry in data.get("targets") or []
    ):
        errors.append(
            ("target", "An agent plays on the offline model or an OpenAI-compatible one.")
        )
    if data.get("scoring_strategy") in ("custom", "highest_rating"):
        errors.append(
            (
                "scoring_strategy",
                "An agent run has no judge rating or plugin score: use first, "
                "fastest or fewest_tokens.",
            )
        )
    return errors


def challenge_errors(
    data: dict[str, Any],
    *,
    secret_names: set[str],
    secret_values: Mapping[str, str] | None = None,
) -> dict[str, list[str]]:
    """Every problem with a challenge's full set of values, keyed by field name.

    `secret_values` (name to value, the workspace's secrets) lets a regex be checked with
    the secret it names filled in, as it will be played.
    """
    errors: dict[str, list[str]] = {}

    def add(field: str, message: str) -> None:
        errors.setdefault(field, []).append(message)

    if not str(data.get("name") or "").strip():
        add("name", "A challenge needs a name.")

    evaluator_type = data.get("evaluator_type", "rules")
    success_type = data.get("success_type", "contains")
    pattern = data.get("success_pattern") or ""
    # An agent challenge is won by a tool call (its scenario's `win`), not by its reply.
    if evaluator_type == "rules" and data.get("mode") != "agent":
        if success_type not in ("contains", "regex"):
            add("success_type", "Rules evaluation needs 'contains' or 'regex'.")
        # In guess mode the answer box decides; the reply is never checked.
        if not pattern.strip() and data.get("answer_mode") != "guess":
            add("success_pattern", "Rules evaluation needs a success pattern.")
    if success_type == "custom" and evaluator_type != "custom":
        add("success_type", "'custom' success needs evaluator_type 'custom'.")
    secret_ref = data.get("secret_ref") or ""
    if success_type == "regex" and pattern:
        reason = pattern_error(pattern, secret=(secret_values or {}).get(secret_ref))
        if reason:
            add("success_pattern", reason)
    if evaluator_type == "custom" and not (
        data.get("evaluator_plugin_id") or data.get("evaluator_entrypoint")
    ):
        add("evaluator_plugin_id", "A custom evaluator needs a plugin id or an entrypoint.")
    if data.get("scoring_strategy") == "custom" and not (
        data.get("scoring_plugin_id") or data.get("scoring_entrypoint")
    ):
        add("scoring_plugin_id", "Custom scoring needs a plugin id or an entrypoint.")

    uses_secret = any(
        SECRET_PLACEHOLDER.search(data.get(field) or "")
        for field in ("success_pattern", "system_prompt")
    )
    per_player = bool(data.get("secret_per_player"))
    if uses_secret and not secret_ref and not per_player:
        add("secret_ref", "{{secret}} is used, so name the secret it stands for.")
    if secret_ref and secret_ref not in secret_names:
        add("secret_ref", f"There is no secret named '{secret_ref}' in this workspace.")

    for message in theme_errors(data.get("theme") or {}):
        add("theme", message)
    for message in judge_config_messages(data.get("judge_config") or {}):
        add("judge_config", message)
    for message in judge_panel_messages(data.get("judge_panel") or {}):
        add("judge_panel", message)
    if data.get("judge_panel") and evaluator_type != "llm-judge":
        add("judge_panel", "A judge panel judges with LLM judges: set the evaluator to llm-judge.")
    for field in ("target_config", "evaluator_config", "scoring_config"):
        if not isinstance(data.get(field) or {}, dict):
            add(field, "Must be an object.")
    for message in target_config_errors(data.get("target"), data.get("target_config") or {}):
        add("target_config", message)
    for message in targets_errors(data.get("targets")):
        add("targets", message)
    if data.get("targets") and data.get("answer_mode") == "guess":
        add("targets", "Several targets judge the model's replies: use answer_mode 'output'.")
    if data.get("target_assignment", "round_robin") not in ("round_robin", "choice"):
        add("target_assignment", "Must be 'round_robin' or 'choice'.")
    if data.get("answer_mode", "output") not in ("output", "guess"):
        add("answer_mode", "Must be 'output' or 'guess'.")
    if data.get("answer_mode") == "guess" and not (secret_ref or per_player):
        add("answer_mode", "Guess mode compares the answer with a secret: name one.")
    for field, message in play_mode_errors(data):
        add(field, message)
    for message in defence_errors(data.get("defences") or []):
        add("defences", message)
    if _guard_hides_the_win(data, evaluator_type=evaluator_type, pattern=pattern):
        add(
            "defences",
            "This challenge can never be won: the output guard stops every reply that holds "
            "the secret, and the success pattern needs the secret in the reply. Use guess "
            "mode (the player types the secret they worked out), or a pattern without "
            "{{secret}}.",
        )
    mask = data.get("mask_variables") or []
    if not (isinstance(mask, list) and all(isinstance(item, str) for item in mask)):
        add("mask_variables", "Must be a list of variable names.")

    if data.get("copy_policy", "off") not in ("off", "flag", "refuse"):
        add("copy_policy", "Must be 'off', 'flag' or 'refuse'.")
    threshold = data.get("copy_threshold", 0.8)
    if (
        not isinstance(threshold, int | float)
        or isinstance(threshold, bool)
        or not 0 < threshold <= 1
    ):
        # 0 would make every win a copy of any other (and pg_trgm's index cannot answer it).
        add("copy_threshold", "A similarity above 0 and at most 1, such as 0.8.")

    starts_at, ends_at = data.get("starts_at"), data.get("ends_at")
    if starts_at and ends_at and ends_at <= starts_at:
        add("ends_at", "The end must come after the start.")
    return errors
