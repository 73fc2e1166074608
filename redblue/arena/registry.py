"""Challenge types and scoring strategies, found through entry points (built-ins included:
plugins/arena-builtins registers them the way any third-party package would)."""

from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

TYPES_GROUP = "prompt_challenges.arena_types"
STRATEGIES_GROUP = "prompt_challenges.scoring_strategies"


@lru_cache(maxsize=1)
def arena_types() -> dict[str, Any]:
    return {point.name: point.load() for point in entry_points(group=TYPES_GROUP)}


@lru_cache(maxsize=1)
def scoring_strategies() -> dict[str, Any]:
    return {point.name: point.load()() for point in entry_points(group=STRATEGIES_GROUP)}


def registry_reload() -> None:
    arena_types.cache_clear()
    scoring_strategies.cache_clear()
