"""System checks over stored challenges: `manage.py check` says which judges cannot work."""

from typing import Any

from django.core.checks import CheckMessage, Warning, register
from django.db import DatabaseError

from judging.errors import JudgeConfigError
from judging.judge_config import judge_config_parse
from judging.llm_judge import judge_route

NAMES_SHOWN = 5


def _named(slugs: list[str]) -> str:
    shown = ", ".join(slugs[:NAMES_SHOWN])
    more = len(slugs) - NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


@register()
def llm_judges_reachable_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    from challenges.models import Challenge

    try:
        rows = list(
            Challenge.objects.filter(
                evaluator_type=Challenge.EvaluatorType.LLM_JUDGE, is_active=True
            )
            .order_by("slug")
            .values_list("slug", "judge_config")
        )
    except DatabaseError:
        # No tables yet (makemigrations --check, a fresh database) or no database at all.
        return []

    not_configured, offline_stand_in, invalid = [], [], []
    for slug, config in rows:
        try:
            judge = judge_config_parse(config)
        except JudgeConfigError:
            invalid.append(slug)
            continue
        route = judge_route(provider=judge.provider)
        if route == "not_configured":
            not_configured.append(slug)
        elif route == "offline" and judge.provider != "offline":
            offline_stand_in.append(slug)

    messages: list[CheckMessage] = []
    if not_configured:
        messages.append(
            Warning(
                f"The LLM judge of {len(not_configured)} active challenge(s) cannot be reached: "
                f"{_named(not_configured)}. OPENAI_API_KEY is set but OPENAI_BASE_URL is "
                "empty, so every attempt at them is judged a non-pass.",
                hint="Set OPENAI_BASE_URL (https://api.openai.com/v1 for OpenAI itself), or "
                "give these challenges an 'offline/…' judge_model.",
                id="judging.W001",
            )
        )
    if offline_stand_in:
        messages.append(
            Warning(
                f"{len(offline_stand_in)} active challenge(s) name a remote judge model but no "
                f"OpenAI-compatible endpoint is configured: {_named(offline_stand_in)}. The "
                "built-in offline keyword judge answers instead, and keyword stuffing passes it.",
                hint="Set OPENAI_BASE_URL (and OPENAI_API_KEY if the endpoint needs one), or "
                "choose an 'offline/…' judge_model on purpose.",
                id="judging.W002",
            )
        )
    if invalid:
        messages.append(
            Warning(
                f"{len(invalid)} active challenge(s) have judge settings the judge refuses: "
                f"{_named(invalid)}. Every attempt at them answers 422 judge_misconfigured.",
                hint="Fix their judge settings in the console or admin (docs/judging.md lists "
                "the rules); a JUDGE_DEFAULT_MODEL that is not 'openai/…' or 'offline/…' "
                "breaks every challenge that names no judge_model.",
                id="judging.W003",
            )
        )
    return messages
