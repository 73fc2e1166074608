"""A session's changes worked out in memory: the arena's one implementation of its rules.

Creating a session, a join, a method call and a chat message are each a function of the
session as read and the request, returning a `SessionChange` — the session's new fields
and its new messages — without touching the database. Two writers apply a change:
services.py under the session's row lock (Django's path), and lane.py in one statement
conditional on the row version it read (the raw lane). Neither decides anything itself.

The end of a game may need the database (the players' profiles decide the game's
category, and the scoring strategies update their standings): `ending_needs_database`
says so, and the writer that cannot do it (the lane) leaves the call to the other.
"""

import uuid
from typing import Any

from django.utils import timezone

from core.errors import ApplicationError
from redblue.arena.operator import ArenaType, Game, OperatorError
from redblue.arena.registry import arena_types
from redblue.models import ArenaChallengeType, ArenaInvite, ArenaMessage, ArenaSession

OPERATOR = "operator"
OPERATOR_PREFIX = "challenge_"
GAME_NOT_RUNNING = "ERR_GAME_NOT_RUNNING: Game not running."


class ArenaError(ApplicationError):
    """An arena refusal, rendered as SpecArena's `{"error", "code"}`."""

    def __init__(self, message: str, *, code: str = "INVALID_REQUEST", status: int = 400) -> None:
        super().__init__(message, code=code, status=status)


def epoch_ms(moment) -> int:
    return int(moment.timestamp() * 1000)


def arena_type_class(*, name: str) -> type[ArenaType]:
    found = arena_types().get(name)
    if found is None:
        raise ArenaError(f"Unknown challenge type: {name}", code="UNKNOWN_CHALLENGE_TYPE")
    return found


def operator_for(*, type_name: str, options: dict[str, Any]) -> ArenaType:
    return arena_type_class(name=type_name)(options)


def message_payload(message: ArenaMessage) -> dict[str, Any]:
    """The seed's `ChatMessage`, unredacted: what the selectors redact per viewer."""
    return payload_of(
        channel=message.channel,
        index=message.index,
        sender=message.sender,
        recipient=message.recipient,
        content=message.content,
        message_type=message.message_type,
        timestamp_ms=message.timestamp_ms,
    )


def payload_of(
    *,
    channel: str,
    index: int,
    sender: str,
    recipient: str,
    content: str,
    message_type: str,
    timestamp_ms: int,
) -> dict[str, Any]:
    """`message_payload` of a message's columns (the lane reads them without the ORM)."""
    data: dict[str, Any] = {
        "channel": channel,
        "from": sender,
        "to": recipient or None,
        "content": content,
        "index": index,
        "timestamp": timestamp_ms,
    }
    if message_type:
        data["type"] = message_type
    return data


def session_new(*, type_row: ArenaChallengeType) -> tuple[ArenaSession, list[ArenaInvite]]:
    """A new session of an enabled type and its invites, not yet saved."""
    if not type_row.enabled:
        raise ArenaError(f"Unknown challenge type: {type_row.name}", code="UNKNOWN_CHALLENGE_TYPE")
    operator = operator_for(type_name=type_row.name, options=type_row.options)
    count = operator.player_count
    session = ArenaSession(
        name=type_row.name,
        challenge_type=type_row,
        invites=[f"inv_{uuid.uuid4()}" for _ in range(count)],
        scores=[{"security": 0, "utility": 0} for _ in range(count)],
        game_state=operator.setup(),
    )
    invites = [
        ArenaInvite(code=code, session=session, position=position)
        for position, code in enumerate(session.invites)
    ]
    return session, invites


class SessionChange:
    """A session's new fields (changed on `session` itself) and its new messages."""

    def __init__(self, session: ArenaSession) -> None:
        self.session = session
        self.messages: list[ArenaMessage] = []
        # The game ended with this change: the writer records the ending (services).
        self.ended_now = False

    def append(
        self, *, operator: bool, sender: str, content: str, to: str = "", message_type: str = ""
    ) -> ArenaMessage:
        session = self.session
        if operator:
            channel, index = session.operator_channel, session.operator_next_index
            session.operator_next_index += 1
        else:
            channel, index = session.chat_channel, session.chat_next_index
            session.chat_next_index += 1
        message = ArenaMessage(
            session=session,
            channel=channel,
            index=index,
            sender=sender,
            recipient=to or "",
            content=content,
            message_type=message_type,
            timestamp_ms=epoch_ms(timezone.now()),
        )
        self.messages.append(message)
        return message

    def apply(self, game: Game) -> None:
        session = self.session
        for outgoing in game.outbox:
            self.append(operator=True, sender=OPERATOR, content=outgoing.content, to=outgoing.to)
        session.players = game.players
        session.scores = game.scores
        session.attributions = game.attributions
        session.game_state = game.state
        if game.ended and session.status != ArenaSession.Status.ENDED:
            session.status = ArenaSession.Status.ENDED
            session.completed_at = timezone.now()
            self.ended_now = True

    def ending_needs_database(self) -> bool:
        """The game ended with identified players: their profiles decide its category and
        the strategies score it (services `game_ending_record`)."""
        return self.ended_now and any(self.session.player_identities.values())

    def payloads(self) -> list[dict[str, Any]]:
        return [message_payload(message) for message in self.messages]


def _game_of(session: ArenaSession) -> Game:
    return Game.of(
        session_id=str(session.pk),
        player_count=len(session.invites),
        players=session.players,
        scores=session.scores,
        attributions=session.attributions,
        state=session.game_state,
    )


def join_apply(
    session: ArenaSession, operator: ArenaType, *, invite: str, user_id: str
) -> tuple[SessionChange, int]:
    """`invite` (one of the session's) takes the next seat; returns the seat's index."""
    if invite in session.players:
        raise ArenaError(f"Invite already used: {invite}", code="INVITE_ALREADY_USED")
    game = _game_of(session)
    game.players.append(invite)
    player_index = len(game.players) - 1
    if user_id:
        session.player_identities = {**session.player_identities, invite: user_id}
    operator.on_join(game, player_index)
    if len(game.players) == game.player_count:
        session.status = ArenaSession.Status.ACTIVE
        operator.on_start(game)
    change = SessionChange(session)
    change.apply(game)
    return change, player_index


def move_apply(
    session: ArenaSession, operator: ArenaType, *, sender: str, method: str, content: str
) -> tuple[SessionChange, OperatorError | None]:
    """A player's method call. The call itself is kept on the operator channel even when
    the operator refuses it (the refusal is returned, for the caller's 400). A call while
    the game is not running (not started, or over) is not an error of the request: as in
    SpecArena, the operator answers it on the caller's operator channel."""
    change = SessionChange(session)
    change.append(
        operator=True,
        sender=sender,
        content=(f"({method}) " if method else "") + content,
        to=OPERATOR,
        message_type=method,
    )
    if session.status != ArenaSession.Status.ACTIVE:
        change.append(operator=True, sender=OPERATOR, content=GAME_NOT_RUNNING, to=sender)
        return change, None
    if sender not in session.players:
        return change, OperatorError("PLAYER_NOT_FOUND", "Player not found.")
    handler = operator.handler(method)
    if handler is None:
        return change, OperatorError("UNKNOWN_METHOD", f"Unknown challenge method: {method}")
    game = _game_of(session)
    try:
        handler(game, session.players.index(sender), content)
    except OperatorError as error:
        return change, error
    change.apply(game)
    return change, None


def chat_apply(
    session: ArenaSession, operator: ArenaType, *, sender: str, content: str, to: str
) -> tuple[SessionChange, ArenaMessage]:
    """A message on the session's chat channel; the operator hears a player's while the
    game runs (a type may count or read them)."""
    change = SessionChange(session)
    message = change.append(operator=False, sender=sender, content=content, to=to)
    if session.status == ArenaSession.Status.ACTIVE and sender in session.players:
        game = _game_of(session)
        operator.on_chat(game, session.players.index(sender), content)
        change.apply(game)
    return change, message
