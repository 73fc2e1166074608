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
    return round(part / whole, 6) if whole else 0.0


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


def _won(result: GameResult, position: int) -> bool:
    return result.scores[position]["utility"] >= 1


class WinRateStrategy(ScoringStrategy):
    name = "win-rate"
    metrics = [
        {"key": "win-rate:rate", "label": "Win rate"},
        {"key": "win-rate:wins", "label": "Wins"},
    ]

    def update_player(self, result, position, invite, entry):
        entry.state["wins"] = entry.state.get("wins", 0) + int(_won(result, position))
        entry.metrics = {
            "win-rate:rate": _ratio(entry.state["wins"], entry.games_played),
            "win-rate:wins": entry.state["wins"],
        }


class RedTeamStrategy(ScoringStrategy):
    name = "red-team"
    metrics = [
        {"key": "red-team:attack", "label": "Attack rate"},
        {"key": "red-team:defend", "label": "Defend rate"},
    ]

    def update_player(self, result, position, invite, entry):
        breaches = [a for a in result.attributions if a.get("type") == "security_breach"]
        caused = sum(1 for a in breaches if a.get("from") == invite)
        suffered = 1 if any(a.get("to") == invite for a in breaches) else 0
        entry.state["caused"] = entry.state.get("caused", 0) + caused
        entry.state["breached"] = entry.state.get("breached", 0) + suffered
        entry.metrics = {
            "red-team:attack": _ratio(entry.state["caused"], entry.games_played),
            "red-team:defend": round(1 - _ratio(entry.state["breached"], entry.games_played), 6),
        }


class ConsecutiveStrategy(ScoringStrategy):
    name = "consecutive"
    metrics = [
        {"key": "consecutive:streak", "label": "Current streak"},
        {"key": "consecutive:best", "label": "Best streak"},
    ]

    def update_player(self, result, position, invite, entry):
        streak = entry.state.get("streak", 0) + 1 if _won(result, position) else 0
        best = max(entry.state.get("best", 0), streak)
        entry.state.update({"streak": streak, "best": best})
        entry.metrics = {"consecutive:streak": streak, "consecutive:best": best}


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
                "global-average:security": round(
                    sum(t["security"] / t["games"] for t in per_type.values()) / count, 6
                ),
                "global-average:utility": round(
                    sum(t["utility"] / t["games"] for t in per_type.values()) / count, 6
                ),
            }
