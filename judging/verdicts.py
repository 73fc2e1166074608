from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Verdict:
    """What any evaluator (rules, LLM judge, plugin) says about one output."""

    passed: bool
    feedback: str = ""
    rating: int | None = None
    raw: dict[str, Any] | None = field(default=None)
    # Each judge's own verdict, `{model, passed, rating, feedback}` (SPEC §10); empty for
    # evaluators that are not LLM judges.
    judges: tuple[dict[str, Any], ...] = ()
    # A panel that disagreed (or rated within its margin): no verdict until a person decides.
    under_review: bool = False
