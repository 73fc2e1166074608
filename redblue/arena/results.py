"""What a finished game hands to the scoring strategies, and the store they write through."""

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class GameResult:
    game_id: str
    challenge_type: str
    created_at: int
    completed_at: int
    scores: list[dict[str, float]]
    players: list[str]
    player_identities: dict[str, str]
    attributions: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "gameId": self.game_id,
            "challengeType": self.challenge_type,
            "createdAt": self.created_at,
            "completedAt": self.completed_at,
            "scores": self.scores,
            "players": self.players,
            "playerIdentities": self.player_identities,
            "attributions": self.attributions,
        }

    def participants(self) -> list[tuple[int, str, str]]:
        """(position, invite, userId) of every player with a known identity."""
        return [
            (position, invite, self.player_identities[invite])
            for position, invite in enumerate(self.players)
            if self.player_identities.get(invite)
        ]

    def is_self_play(self) -> bool:
        users = [user for _, _, user in self.participants()]
        return len(set(users)) < len(users)


@dataclass
class StoredEntry:
    """One player's standing under one strategy: what the strategy reads and changes."""

    games_played: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)


class ScoringStore(Protocol):
    def entry(self, *, challenge_type: str, strategy: str, player_id: str) -> StoredEntry: ...
