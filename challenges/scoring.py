"""Per-challenge strategies: how an attempt's metrics become a score and a rank."""

from dataclasses import dataclass

# Points a solve is worth, on the site scoreboard and in collections summed by points.
POINTS_PER_SOLVE = 100

# Successes that lack the metric the strategy ranks on sort after every measured one.
UNMEASURED = 1e15


@dataclass(frozen=True)
class Standing:
    score: float | None
    rank_value: float  # lower is better; ties go to the earlier attempt


def standing_for(
    strategy: str,
    *,
    elapsed_ms: int | None,
    tokens_total: int | None,
    judge_rating: int | None,
    custom_score: float | None = None,
) -> Standing:
    if strategy == "first":
        return Standing(score=1.0, rank_value=0.0)
    if strategy == "fastest":
        return _lower_is_better(elapsed_ms)
    if strategy == "fewest_tokens":
        return _lower_is_better(tokens_total)
    if strategy == "highest_rating":
        return _higher_is_better(judge_rating)
    if strategy == "custom":
        return _higher_is_better(custom_score)
    raise ValueError(f"Unknown scoring strategy '{strategy}'.")


def _lower_is_better(value: float | None) -> Standing:
    if value is None:
        return Standing(score=None, rank_value=UNMEASURED)
    return Standing(score=float(value), rank_value=float(value))


def _higher_is_better(value: float | None) -> Standing:
    if value is None:
        return Standing(score=None, rank_value=UNMEASURED)
    return Standing(score=float(value), rank_value=-float(value))
