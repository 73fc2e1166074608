"""Judges: one interface, an implementation per kind (one LLM judge, a panel of them).

Callers ask `judge_for(...)` for the challenge's judge and call it; none of them branches
on which kind it is. A panel is a judge that combines judges (SPEC §10): its `rule` makes
the verdict and its `review` setting sends an attempt to a person instead.
"""

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from core.numbers import is_number
from judging.errors import JudgeConfigError
from judging.judge_config import judge_config_messages, judge_config_parse
from judging.llm_judge import judge_token_estimate, judge_with_llm_async
from judging.verdicts import TokenUse, Verdict

PANEL_RULES = ("all", "majority", "any")
PANEL_REVIEWS = ("disagreement", "margin", "never")
PANEL_KEYS = ("judges", "rule", "review", "review_margin")
PANEL_MAX_JUDGES = 5
UNDER_REVIEW_FEEDBACK = (
    "Your attempt is under review: the judges did not agree, so a person will decide."
)


class Judge(Protocol):
    """`hints` and `prompt` (the player's text that drew `response`) reach the rubric as
    quoted data; a red/blue suite passes the category and the attack in them."""

    async def judge_async(
        self, *, goal: str, response: str, hints: str = "", prompt: str = ""
    ) -> Verdict: ...

    def token_estimate(self, *, goal: str, response_tokens: int) -> tuple[TokenUse, ...]:
        """The most each of its calls is expected to use (what a budget hold reserves)."""
        ...


def judge_entry(verdict: Verdict, *, model: str) -> dict[str, Any]:
    """One judge's stored verdict (SPEC §10); `cost` is priced when it is recorded."""
    tokens = sum(use.total for use in verdict.usage) if verdict.usage else None
    return {
        "model": model,
        "passed": verdict.passed,
        "rating": verdict.rating,
        "feedback": verdict.feedback,
        "tokens": tokens,
        "cost": None,
    }


def _own_verdict(verdict: Verdict, *, config: dict) -> Verdict:
    model = (verdict.raw or {}).get("judge_model") or judge_config_parse(config).judge_model
    return Verdict(
        passed=verdict.passed,
        feedback=verdict.feedback,
        rating=verdict.rating,
        raw=verdict.raw,
        judges=(judge_entry(verdict, model=model),),
        # One per entry, so the two line up when the entries are priced (a call that
        # never answered used nothing we know of).
        usage=(verdict.usage[0] if verdict.usage else TokenUse(model, 0, 0),),
    )


@dataclass(frozen=True)
class LlmJudge:
    config: dict

    async def judge_async(
        self, *, goal: str, response: str, hints: str = "", prompt: str = ""
    ) -> Verdict:
        verdict = await judge_with_llm_async(
            goal=goal, response=response, config=self.config, hints=hints, prompt=prompt
        )
        return _own_verdict(verdict, config=self.config)

    def token_estimate(self, *, goal: str, response_tokens: int) -> tuple[TokenUse, ...]:
        return (judge_token_estimate(self.config, goal=goal, response_tokens=response_tokens),)


@dataclass(frozen=True)
class PanelJudge:
    judges: tuple[LlmJudge, ...]
    rule: str
    review: str
    review_margin: float

    async def judge_async(
        self, *, goal: str, response: str, hints: str = "", prompt: str = ""
    ) -> Verdict:
        texts = {"goal": goal, "response": response, "hints": hints, "prompt": prompt}
        verdicts = await asyncio.gather(*(judge.judge_async(**texts) for judge in self.judges))
        return self.combine(list(verdicts))

    def token_estimate(self, *, goal: str, response_tokens: int) -> tuple[TokenUse, ...]:
        return tuple(
            use
            for judge in self.judges
            for use in judge.token_estimate(goal=goal, response_tokens=response_tokens)
        )

    def combine(self, verdicts: list[Verdict]) -> Verdict:
        votes = [verdict.passed for verdict in verdicts]
        if self.rule == "all":
            passed = all(votes)
        elif self.rule == "any":
            passed = any(votes)
        else:
            passed = sum(votes) * 2 > len(votes)
        ratings = [verdict.rating for verdict in verdicts if verdict.rating is not None]
        rating = round(sum(ratings) / len(ratings)) if ratings else None
        feedback = next((v.feedback for v in verdicts if v.passed == passed), "")
        under_review = self._needs_review(verdicts)
        return Verdict(
            passed=passed and not under_review,
            feedback=UNDER_REVIEW_FEEDBACK if under_review else feedback,
            rating=rating,
            raw={"rule": self.rule, "review": self.review, "judges": [v.raw for v in verdicts]},
            judges=tuple(entry for verdict in verdicts for entry in verdict.judges),
            under_review=under_review,
            usage=tuple(use for verdict in verdicts for use in verdict.usage),
        )

    def _needs_review(self, verdicts: list[Verdict]) -> bool:
        if self.review == "disagreement":
            return len({verdict.passed for verdict in verdicts}) > 1
        if self.review == "margin":
            # Any judge whose rating sits within the margin of its own pass threshold.
            for judge, verdict in zip(self.judges, verdicts, strict=True):
                if verdict.rating is None:
                    continue
                threshold = judge_config_parse(judge.config).pass_threshold
                if abs(verdict.rating - threshold) <= self.review_margin:
                    return True
        return False


def judge_panel_errors(panel: Any) -> dict[str, list[str]]:
    """Every problem with a creator's `judge_panel`, keyed by the setting it concerns; an
    empty or null panel means "no panel" and has none."""
    if panel in (None, {}):
        return {}
    if not isinstance(panel, dict):
        return {"judge_panel": ["The judge panel must be an object."]}
    errors: dict[str, list[str]] = {}

    def add(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    for key in panel:
        if key not in PANEL_KEYS:
            add(str(key), f"Unknown panel setting '{key}'.")
    judges = panel.get("judges")
    if not isinstance(judges, list) or not 2 <= len(judges) <= PANEL_MAX_JUDGES:
        add("judges", f"A panel has from 2 to {PANEL_MAX_JUDGES} judges (a list of judge configs).")
    else:
        for number, config in enumerate(judges, start=1):
            for message in judge_config_messages(config):
                add("judges", f"Judge {number}: {message}")
    if panel.get("rule", "majority") not in PANEL_RULES:
        add("rule", "'rule' must be one of: " + ", ".join(PANEL_RULES) + ".")
    if panel.get("review", "disagreement") not in PANEL_REVIEWS:
        add("review", "'review' must be one of: " + ", ".join(PANEL_REVIEWS) + ".")
    margin = panel.get("review_margin", 0)
    if margin is not None and not (is_number(margin) and 0 <= margin <= 100):
        add("review_margin", "'review_margin' must be a number from 0 to 100.")
    return errors


def judge_panel_messages(panel: Any) -> list[str]:
    return [message for messages in judge_panel_errors(panel).values() for message in messages]


def judge_for(*, judge_config: dict | None, judge_panel: dict | None) -> Judge:
    """The judge a challenge (or suite) is judged by: its panel when it has one."""
    if not judge_panel:
        return LlmJudge(config=judge_config or {})
    problems = judge_panel_messages(judge_panel)
    if problems:
        raise JudgeConfigError(" ".join(problems))
    return PanelJudge(
        judges=tuple(LlmJudge(config=config or {}) for config in judge_panel["judges"]),
        rule=judge_panel.get("rule") or "majority",
        review=judge_panel.get("review") or "disagreement",
        review_margin=float(judge_panel.get("review_margin") or 0),
    )
