"""The operator runtime a challenge type is written against.

A type is a class with the seed's `ChallengeMetadata`, a `setup` that draws the private
`gameState`, hooks for joins and the game start, and one handler per method. Handlers work
on a `Game`: a copy of the session's state they may change, with `send`, `broadcast`,
`attribute` and `end`. The services lock the session row, run the handler, and write the
copy back only when the handler did not refuse the call.
"""

import copy
import random
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

NUMBER = re.compile(r"\d+")


class OperatorError(Exception):
    """A method call the operator refuses: SpecArena's `{error, code}`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Outgoing:
    content: str
    to: str = ""


@dataclass
class Game:
    session_id: str
    player_count: int
    players: list[str]
    scores: list[dict[str, float]]
    attributions: list[dict[str, str]]
    state: dict[str, Any]
    ended: bool = False
    outbox: list[Outgoing] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        *,
        session_id: str,
        player_count: int,
        players: list[str],
        scores: list[dict[str, float]],
        attributions: list[dict[str, str]],
        state: dict[str, Any],
    ) -> "Game":
        return cls(
            session_id=session_id,
            player_count=player_count,
            players=list(players),
            scores=copy.deepcopy(scores),
            attributions=copy.deepcopy(attributions),
            state=copy.deepcopy(state),
        )

    def send(self, content: str, *, to: str) -> None:
        """An operator message that only `to` (an invite code) may read."""
        self.outbox.append(Outgoing(content=content, to=to))

    def broadcast(self, content: str) -> None:
        self.outbox.append(Outgoing(content=content))

    def attribute(self, *, source: int, target: int, kind: str) -> None:
        self.attributions.append(
            {"from": self.players[source], "to": self.players[target], "type": kind}
        )

    def end(self) -> None:
        self.ended = True
        lines = "\n".join(
            f"- Player {position + 1}: security {score['security']}, utility {score['utility']}"
            for position, score in enumerate(self.scores)
        )
        self.broadcast(f"Game ended.\n\nScores are:\n{lines}")


Handler = Callable[[Game, int, str], None]


class ArenaType:
    """Base class of a challenge type; subclasses set the class attributes and handlers."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    description: ClassVar[str] = ""
    players: ClassVar[int] = 2
    prompt: ClassVar[str] = ""
    methods: ClassVar[list[dict[str, str]]] = []
    color: ClassVar[str] = ""
    icon: ClassVar[str] = ""
    tags: ClassVar[list[str]] = []
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.options = {**self.defaults, **(options or {})}
        self.rng: random.Random = secrets.SystemRandom()

    @property
    def player_count(self) -> int:
        return int(self.options.get("players", self.players))

    @classmethod
    def metadata(cls) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": cls.title or cls.name,
            "description": cls.description,
            "players": cls.players,
            "prompt": cls.prompt,
            "methods": [dict(method) for method in cls.methods],
        }
        if cls.color:
            data["color"] = cls.color
        if cls.icon:
            data["icon"] = cls.icon
        if cls.tags:
            data["tags"] = list(cls.tags)
        return data

    # --- what a type overrides ---

    def setup(self) -> dict[str, Any]:
        return {}

    def on_join(self, game: Game, player_index: int) -> None:
        return None

    def on_start(self, game: Game) -> None:
        return None

    def on_chat(self, game: Game, player_index: int, content: str) -> None:
        """Told of every chat message a player sends while the game runs."""
        return None

    def handler(self, method: str) -> Handler | None:
        if method not in {entry["name"] for entry in self.methods}:
            return None
        return getattr(self, "handle_" + method.replace("-", "_"), None)

    # --- helpers for handlers ---

    @staticmethod
    def numbers_in(text: str) -> list[int]:
        return [int(found) for found in NUMBER.findall(text or "")]
