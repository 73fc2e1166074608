from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TokenUse:
    """One judge call's tokens, as the provider's `usage` reports them (the offline judge
    counts its own, deterministically)."""

    model: str
    input_tokens: int
    output_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Verdict:
    """What any evaluator (rules, LLM judge, plugin) says about one output."""

    passed: bool
    feedback: str = ""
    rating: int | None = None
    raw: dict[str, Any] | None = field(default=None)
    # Each judge's own verdict, `{model, passed, rating, feedback, tokens, cost}` (SPEC §10);
    # empty for evaluators that are not LLM judges. `cost` is filled when the attempt is
    # recorded, at the workspace's price of the judge's `provider/model`.
    judges: tuple[dict[str, Any], ...] = ()
    # A panel that disagreed (or rated within its margin): no verdict until a person decides.
    under_review: bool = False
    # The tokens of every judge call behind this verdict; one per entry of `judges` (in
    # their order) once a judge of judging/judges.py made it.
    usage: tuple[TokenUse, ...] = ()
    # The tokens of the defence layers' judge calls behind this attempt (`llm_check` on a
    # reply, `llm_tool_check` on an agent's tool calls): counted in the attempt's judge
    # totals and its spend, never listed among its `judges` (they judge the defence, not
    # the attempt).
    check_usage: tuple[TokenUse, ...] = ()
