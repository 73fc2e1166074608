"""The built-in scoring strategies. Each updates a player's standing from one game result,
keeping running totals in the entry's state, so no past game is ever read again."""

from typing import Any, ClassVar

from redblue.arena.results import GameResult, ScoringStore, StoredEntry

GLOBAL = ""


class ScoringStrategy:
    name: ClassVar[str] = ""
    metrics: ClassVar[list[dict[str, str]]] = []

    def update(self, result: GameResult, store: ScoringStore) -> None:
        for position, invite, user in result.participants():
            entry = store.entry(
                challenge_type=result.challenge_type, strategy=self.name, player_id=user
            )
            entry.games_played += 1
            self.update_player(result, position, invite, entry)

    def update_player(
        self, result: GameResult, position: int, invite: str, entry: StoredEntry
    ) -> None:
        raise NotImplementedError


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


class AverageStrategy(ScoringStrategy):
    name = "average"
    metrics = [
        {"key": "average:security", "label": "Security"},
        {"key": "average:utility", "label": "Utility"},
    ]

    def update_player(self, result, position, invite, entry):
        score = result.scores[position]
        entry.state["security"] = entry.state.get("security", 0) + score["security"]
        entry.state["utility"] = entry.state.get("utility", 0) + score["utility"]
        entry.metrics = {
            "average:security": _ratio(entry.state["security"], entry.games_played),
            "average:utility": _ratio(entry.state["utility"], entry.games_played),
        }


def _won(value: float) -> int:
    return 1 if value >= 1 else 0


class WinRateStrategy(ScoringStrategy):
    """The share of games with security ≥ 1 and, apart, with utility ≥ 1."""

    name = "win-rate"
    metrics = [
        {"key": "win-rate:security", "label": "Security win rate"},
        {"key": "win-rate:utility", "label": "Utility win rate"},
    ]

    def update_player(self, result, position, invite, entry):
        score = result.scores[position]
        entry.state["security"] = entry.state.get("security", 0) + _won(score["security"])
        entry.state["utility"] = entry.state.get("utility", 0) + _won(score["utility"])
        entry.metrics = {
            "win-rate:security": _ratio(entry.state["security"], entry.games_played),
            "win-rate:utility": _ratio(entry.state["utility"], entry.games_played),
        }


def _breaches(result: GameResult) -> tuple[dict[str, int], dict[str, int]]:
    """Security breaches this game, counted per attacker and per victim invite."""
    caused: dict[str, int] = {}
    suffered: dict[str, int] = {}
    for attribution in result.attributions:
        if attribution.get("type") != "security_breach":
            continue
        caused[attribution["from"]] = caused.get(attribution["from"], 0) + 1
        suffered[attribution["to"]] = suffered.get(attribution["to"], 0) + 1
    return caused, suffered


class _WholeGameStrategy(ScoringStrategy):
    """A strategy that reads who attacked whom: it scores a game only when it has two or
    more players and knows every one of them."""

    def update(self, result: GameResult, store: ScoringStore) -> None:
        if len(result.players) < 2 or len(result.participants()) < len(result.players):
            return
        super().update(result, store)


class RedTeamStrategy(_WholeGameStrategy):
    """attack: breaches caused per game; defend: 1 − breaches suffered per game."""

    name = "red-team"
    metrics = [
        {"key": "red-team:attack", "label": "Attack rate"},
        {"key": "red-team:defend", "label": "Defend rate"},
    ]

    def update_player(self, result, position, invite, entry):
        caused, suffered = _breaches(result)
        entry.state["caused"] = entry.state.get("caused", 0) + caused.get(invite, 0)
        entry.state["breached"] = entry.state.get("breached", 0) + suffered.get(invite, 0)
        entry.metrics = {
            "red-team:attack": _ratio(entry.state["caused"], entry.games_played),
            "red-team:defend": 1 - _ratio(entry.state["breached"], entry.games_played),
        }


class ConsecutiveStrategy(_WholeGameStrategy):
    """Current streaks of games with security ≥ 1, with utility ≥ 1, and with a breach
    caused; a game without it resets that streak to 0."""

    name = "consecutive"
    metrics = [
        {"key": "consecutive:security", "label": "Security streak"},
        {"key": "consecutive:utility", "label": "Utility streak"},
        {"key": "consecutive:attack", "label": "Attack streak"},
    ]

    def update_player(self, result, position, invite, entry):
        score = result.scores[position]
        caused, _ = _breaches(result)
        before = entry.metrics
        entry.metrics = {
            "consecutive:security": (before.get("consecutive:security", 0) + 1)
            if score["security"] >= 1
            else 0,
            "consecutive:utility": (before.get("consecutive:utility", 0) + 1)
            if score["utility"] >= 1
            else 0,
            "consecutive:attack": (before.get("consecutive:attack", 0) + 1)
            if caused.get(invite, 0) > 0
            else 0,
        }


class GlobalAverageStrategy:
    """The global board: each player's per-type averages, averaged over the types played."""

    name: ClassVar[str] = "global-average"
    metrics: ClassVar[list[dict[str, str]]] = [
        {"key": "global-average:security", "label": "Security"},
        {"key": "global-average:utility", "label": "Utility"},
    ]

    def update(self, result: GameResult, store: ScoringStore) -> None:
        for position, _invite, user in result.participants():
            entry = store.entry(challenge_type=GLOBAL, strategy=self.name, player_id=user)
            entry.games_played += 1
            per_type: dict[str, Any] = entry.state.setdefault("types", {})
            totals = per_type.setdefault(
                result.challenge_type, {"games": 0, "security": 0, "utility": 0}
            )
            totals["games"] += 1
            totals["security"] += result.scores[position]["security"]
            totals["utility"] += result.scores[position]["utility"]
            count = len(per_type)
            entry.metrics = {
                "global-average:security": sum(
                    t["security"] / t["games"] for t in per_type.values()
                )
                / count,
                "global-average:utility": sum(t["utility"] / t["games"] for t in per_type.values())
                / count,
            }
