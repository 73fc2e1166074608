from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Verdict:
    """What any evaluator (rules, LLM judge, plugin) says about one output."""

    passed: bool
    feedback: str = ""
    rating: int | None = None
    raw: dict[str, Any] | None = field(default=None)
