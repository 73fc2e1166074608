"""Challenge types and scoring strategies: the built-ins, known here directly (they ship with
the app), plus whatever installed packages register through the entry-point groups. An
entry point cannot replace a built-in of the same name."""

from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

from redblue.arena import strategies
from redblue.arena.types.dining_cryptographers import DiningCryptographersType
from redblue.arena.types.millionaire import MillionaireType
from redblue.arena.types.psi import PsiType
from redblue.arena.types.secret_keeper import SecretKeeperType
from redblue.arena.types.ultimatum import UltimatumType

TYPES_GROUP = "prompt_challenges.arena_types"
STRATEGIES_GROUP = "prompt_challenges.scoring_strategies"

BUILTIN_TYPES: dict[str, Any] = {
    "psi": PsiType,
    "millionaire": MillionaireType,
    "ultimatum": UltimatumType,
    "dining-cryptographers": DiningCryptographersType,
    "secret-keeper": SecretKeeperType,
}
BUILTIN_STRATEGIES: dict[str, Any] = {
    "average": strategies.AverageStrategy,
    "win-rate": strategies.WinRateStrategy,
    "red-team": strategies.RedTeamStrategy,
    "consecutive": strategies.ConsecutiveStrategy,
    "global-average": strategies.GlobalAverageStrategy,
}


def _registered(group: str, builtins: dict[str, Any]) -> dict[str, Any]:
    found = dict(builtins)
    for point in entry_points(group=group):
        found.setdefault(point.name, None)
        if found[point.name] is None:
            found[point.name] = point.load()
    return found


@lru_cache(maxsize=1)
def arena_types() -> dict[str, Any]:
    return _registered(TYPES_GROUP, BUILTIN_TYPES)


@lru_cache(maxsize=1)
def scoring_strategies() -> dict[str, Any]:
    return {
        name: strategy()
        for name, strategy in _registered(STRATEGIES_GROUP, BUILTIN_STRATEGIES).items()
    }


def registry_reload() -> None:
    arena_types.cache_clear()
    scoring_strategies.cache_clear()
