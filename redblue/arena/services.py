"""Every arena write: sessions, joins, method calls, chat, profiles, scoring, pruning.

State changes of a session happen under its row lock (`select_for_update`), so two joins
or two method calls at once are applied one after the other, never interleaved.
"""

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone

from notifications.live import group_send_on_commit
from players.models import account_external_id
from redblue.arena.moves import (  # noqa: F401 (the arena's names, kept where callers look)
    GAME_NOT_RUNNING,
    OPERATOR,
    OPERATOR_PREFIX,
    ArenaError,
    SessionChange,
    arena_type_class,
    chat_apply,
    epoch_ms,
    join_apply,
    message_payload,
    move_apply,
    operator_for,
    session_new,
)
from redblue.arena.operator import ArenaType
from redblue.arena.registry import arena_types, scoring_strategies
from redblue.arena.results import GameResult, StoredEntry
from redblue.models import (
    ArenaChallengeType,
    ArenaInvite,
    ArenaMessage,
    ArenaSession,
    ArenaUser,
    ScoringEntry,
)


def arena_group(session_id: Any) -> str:
    return f"arena.{session_id}"


def channel_group(channel: str) -> str:
    """The live group of a channel outside every session (any name: hashed for the layer)."""
    return "arena.channel." + hashlib.sha256(channel.encode()).hexdigest()[:40]


# --- challenge types ---------------------------------------------------------------


def arena_type_install(*, name: str) -> ArenaChallengeType:
    arena_type_class(name=name)
    row, _ = ArenaChallengeType.objects.get_or_create(name=name)
    return row


def arena_types_install_all() -> list[ArenaChallengeType]:
    return [arena_type_install(name=name) for name in sorted(arena_types())]


def _type_for(row: ArenaChallengeType) -> ArenaType:
    return operator_for(type_name=row.name, options=row.options)


# --- sessions ----------------------------------------------------------------------


def arena_session_create(*, type_name: str) -> ArenaSession:
    arena_type_class(name=type_name)
    session, invites = session_new(type_row=arena_type_install(name=type_name))
    with transaction.atomic():
        session.save(force_insert=True)
        ArenaInvite.objects.bulk_create(invites)
    return session


def _locked(session_id: Any) -> ArenaSession:
    try:
        return ArenaSession.objects.select_for_update().get(pk=session_id)
    except (ArenaSession.DoesNotExist, ValidationError, ValueError, TypeError):
        raise ArenaError("Challenge not found", code="NOT_FOUND", status=404) from None


def _save(change: SessionChange) -> None:
    """Write a change worked out under the session's row lock (moves.py), recording the
    game's ending first when the change ended it."""
    session = change.session
    if change.ended_now:
        game_ending_record(session)
    session.save()
    ArenaMessage.objects.bulk_create(change.messages)
    session_id = session.pk
    # The new messages ride in the ping, so a live stream sends each as it comes
    # without reading the database first (see sse.py).
    ping = session_changed_ping(session, change.payloads())
    group_send_on_commit(group=arena_group(session_id), message=lambda: ping)


def session_changed_ping(session: ArenaSession, payloads: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "arena.changed",
        "session": str(session.pk),
        "messages": payloads,
        "ended": session.status == ArenaSession.Status.ENDED,
    }


def game_ending_record(session: ArenaSession) -> None:
    """A game just ended: its category from the players' profiles, and its scoring."""
    session.game_category = _game_category(session)
    _scoring_record(result=game_result_of(session))


def _game_category(session: ArenaSession) -> str:
    """SpecArena's classification of a finished game: `benchmark` when every identified
    player is a benchmark profile, `test` when all but one are, `train` otherwise."""
    user_ids = [user for user in session.player_identities.values() if user]
    if not user_ids:
        return ArenaSession.GameCategory.TRAIN
    benchmark = set(
        ArenaUser.objects.filter(user_id__in=user_ids, is_benchmark=True).values_list(
            "user_id", flat=True
        )
    )
    others = sum(1 for user in user_ids if user not in benchmark)
    if others == 0:
        return ArenaSession.GameCategory.BENCHMARK
    if others == 1:
        return ArenaSession.GameCategory.TEST
    return ArenaSession.GameCategory.TRAIN


@dataclass(frozen=True)
class JoinResult:
    session: ArenaSession
    player_index: int


def arena_join(*, invite: str, user_id: str = "") -> JoinResult:
    with transaction.atomic():
        row = ArenaInvite.objects.filter(code=invite).values_list("session_id", flat=True).first()
        if row is None:
            raise ArenaError(f"Challenge not found for invite: {invite}", code="NOT_FOUND")
        session = _locked(row)
        change, player_index = join_apply(
            session, _type_for(session.challenge_type), invite=invite, user_id=user_id
        )
        # The invite row's conditional update is the database's own guard against reuse.
        claimed = ArenaInvite.objects.filter(code=invite, player_index__isnull=True).update(
            player_index=player_index, user_id=user_id, joined_at=timezone.now()
        )
        if claimed != 1:
            raise ArenaError(f"Invite already used: {invite}", code="INVITE_ALREADY_USED")
        _save(change)
    if user_id:
        ArenaUser.objects.get_or_create(user_id=user_id)
    return JoinResult(session=session, player_index=player_index)


def arena_message_send(*, session_id: Any, sender: str, method: str, content: str) -> None:
    """A player's method call (moves.move_apply); a refusal reaches the caller as an
    ArenaError once the call itself is kept."""
    with transaction.atomic():
        session = _locked(session_id)
        change, refusal = move_apply(
            session,
            _type_for(session.challenge_type),
            sender=sender,
            method=method,
            content=content,
        )
        _save(change)
    if refusal is not None:
        raise ArenaError(refusal.message, code=refusal.code)


def channel_session_id(channel: str) -> uuid.UUID | None:
    """The session a channel name (`<id>` or `challenge_<id>`) belongs to, if it exists."""
    try:
        session_id = uuid.UUID(channel.removeprefix(OPERATOR_PREFIX))
    except (ValueError, AttributeError):
        return None
    return session_id if ArenaSession.objects.filter(pk=session_id).exists() else None


def arena_channel_send(*, channel: str, sender: str, content: str, to: str = "") -> ArenaMessage:
    """SpecArena's `chat/send`: a message on the channel named, whatever it is. A session's
    operator channel `challenge_<id>` and chat channel `<id>` are written under the
    session's lock; any other name is a channel of its own, outside every session."""
    session_id = channel_session_id(channel)
    if session_id is None:
        return _free_channel_append(channel=channel, sender=sender, content=content, to=to)
    if channel.startswith(OPERATOR_PREFIX):
        with transaction.atomic():
            change = SessionChange(_locked(session_id))
            message = change.append(operator=True, sender=sender, content=content, to=to)
            _save(change)
        return message
    return arena_chat_send(session_id=session_id, sender=sender, content=content, to=to)


def arena_chat_send(*, session_id: Any, sender: str, content: str, to: str = "") -> ArenaMessage:
    """A message on the session's chat channel; the operator hears a player's while the
    game runs (a type may count or read them)."""
    with transaction.atomic():
        session = _locked(session_id)
        change, message = chat_apply(
            session, _type_for(session.challenge_type), sender=sender, content=content, to=to
        )
        _save(change)
    return message


FREE_CHANNEL_ATTEMPTS = 20


def _free_channel_append(*, channel: str, sender: str, content: str, to: str) -> ArenaMessage:
    # No row to lock: the next index is read and the unique (channel, index) constraint
    # refuses a writer that raced us to it, which then reads again.
    for _ in range(FREE_CHANNEL_ATTEMPTS):
        try:
            with transaction.atomic():
                last = ArenaMessage.objects.filter(channel=channel).aggregate(Max("index"))
                message = ArenaMessage.objects.create(
                    session=None,
                    channel=channel,
                    index=(last["index__max"] or 0) + 1,
                    sender=sender,
                    recipient=to or "",
                    content=content,
                    timestamp_ms=epoch_ms(timezone.now()),
                )
                ping = {
                    "type": "arena.changed",
                    "channel": channel,
                    "messages": [message_payload(message)],
                    "ended": False,
                }
                group_send_on_commit(group=channel_group(channel), message=lambda ping=ping: ping)
                return message
        except IntegrityError:
            continue
    raise ArenaError("The channel is busy; send again.", code="CHANNEL_BUSY", status=503)


# --- profiles ----------------------------------------------------------------------


def arena_user_update(
    *,
    user_id: str,
    username: str | None = None,
    model: str | None = None,
    is_benchmark: bool | None = None,
) -> ArenaUser:
    """Create the profile, or merge the fields given into it. `is_benchmark` is set by
    staff (the admin), never by the player's own signed update."""
    changes: dict[str, Any] = {
        field: value.strip()
        for field, value in (("username", username), ("model", model))
        if value is not None
    }
    for field, value in changes.items():
        if len(value) > 100:
            raise ArenaError(f"{field} is longer than 100 characters.")
    if is_benchmark is not None:
        changes["is_benchmark"] = bool(is_benchmark)
    try:
        with transaction.atomic():
            user, created = ArenaUser.objects.get_or_create(user_id=user_id, defaults=changes)
    except IntegrityError:
        user, created = ArenaUser.objects.get(user_id=user_id), False
    if not created and changes:
        for field, value in changes.items():
            setattr(user, field, value)
        user.save(update_fields=[*changes, "updated_at"])
    return user


def arena_user_for_account(*, account) -> ArenaUser:
    """The arena identity of a site account, named by the player's display name (never by
    their email) and kept in step when they rename themselves."""
    name = site_player_name(account)
    user, created = ArenaUser.objects.get_or_create(
        account=account, defaults={"user_id": account_external_id(account.pk), "username": name}
    )
    if not created and user.username != name:
        ArenaUser.objects.filter(pk=user.pk).update(username=name)
        user.username = name
    return user


def site_player_name(account) -> str:
    profile = getattr(account, "player_profile", None)
    return (getattr(profile, "display_name", "") or f"player-{account.pk}")[:100]


# --- scoring -----------------------------------------------------------------------


def game_result_of(session: ArenaSession) -> GameResult:
    return GameResult(
        game_id=str(session.pk),
        challenge_type=session.challenge_type_id,
        created_at=epoch_ms(session.created_at),
        completed_at=epoch_ms(session.completed_at or timezone.now()),
        scores=session.scores,
        players=session.players,
        player_identities=session.player_identities,
        attributions=session.attributions,
    )


class _DatabaseStore:
    """The strategies' storage adapter: rows locked up front in key order, so two games
    ending at once for the same players cannot deadlock, and written back in one go."""

    def __init__(self, keys: list[tuple[str, str, str]]) -> None:
        self.rows: dict[tuple[str, str, str], ScoringEntry] = {}
        self.entries: dict[tuple[str, str, str], StoredEntry] = {}
        self._load(sorted(set(keys)))

    def _load(self, keys: list[tuple[str, str, str]]) -> None:
        if not keys:
            return
        ScoringEntry.objects.bulk_create(
            [ScoringEntry(challenge_type=t, strategy=s, player_id=p) for t, s, p in keys],
            ignore_conflicts=True,
        )
        players = {p for _, _, p in keys}
        wanted = set(keys)
        locked = (
            ScoringEntry.objects.select_for_update()
            .filter(player_id__in=players, challenge_type__in={t for t, _, _ in keys})
            .filter(strategy__in={s for _, s, _ in keys})
            .order_by("challenge_type", "strategy", "player_id")
        )
        for row in locked:
            key = (row.challenge_type, row.strategy, row.player_id)
            if key in wanted:
                self.rows[key] = row
                self.entries[key] = StoredEntry(
                    games_played=row.games_played, metrics=dict(row.metrics), state=dict(row.state)
                )

    def entry(self, *, challenge_type: str, strategy: str, player_id: str) -> StoredEntry:
        key = (challenge_type, strategy, player_id)
        if key not in self.entries:
            self._load([key])
        return self.entries[key]

    def save(self) -> None:
        rows = []
        for key, stored in self.entries.items():
            row = self.rows[key]
            row.games_played, row.metrics, row.state = (
                stored.games_played,
                stored.metrics,
                stored.state,
            )
            row.updated_at = timezone.now()
            rows.append(row)
        if connection.vendor == "postgresql":
            _scoring_rows_write(rows)
        else:
            ScoringEntry.objects.bulk_update(
                rows, ["games_played", "metrics", "state", "updated_at"]
            )


_SCORING_ROWS_WRITE = f"""
    UPDATE {ScoringEntry._meta.db_table} AS entry
    SET games_played = v.games_played, metrics = v.metrics, state = v.state,
        updated_at = v.updated_at
    FROM unnest(%s::bigint[], %s::int[], %s::jsonb[], %s::jsonb[], %s::timestamptz[])
        AS v(id, games_played, metrics, state, updated_at)
    WHERE entry.id = v.id
"""  # noqa: S608 (the table's name from the model; every value is bound)


def _scoring_rows_write(rows: list[ScoringEntry]) -> None:
    """The rows' new standings in one statement (bulk_update's CASE per field and row
    costs milliseconds of compiling at every game's end)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _SCORING_ROWS_WRITE,
            [
                [row.pk for row in rows],
                [row.games_played for row in rows],
                [json.dumps(row.metrics) for row in rows],
                [json.dumps(row.state) for row in rows],
                [row.updated_at for row in rows],
            ],
        )


def _configured_strategies() -> tuple[list[Any], Any | None]:
    known = scoring_strategies()
    per_type = [known[name] for name in settings.ARENA_SCORING_STRATEGIES if name in known]
    return per_type, known.get(settings.ARENA_GLOBAL_STRATEGY)


def _scoring_record(*, result: GameResult) -> None:
    """Hand one finished game to every configured strategy, in the game's transaction."""
    if result.is_self_play() or not result.participants():
        return
    per_type, global_strategy = _configured_strategies()
    users = [user for _, _, user in result.participants()]
    keys = [(result.challenge_type, s.name, u) for s in per_type for u in users]
    if global_strategy is not None:
        keys += [(ScoringEntry.GLOBAL, global_strategy.name, u) for u in users]
    store = _DatabaseStore(keys)
    for strategy in per_type:
        strategy.update(result, store)
    if global_strategy is not None:
        global_strategy.update(result, store)
    store.save()


# --- pruning -----------------------------------------------------------------------


def arena_sessions_prune(*, now: datetime | None = None) -> int:
    """Delete open sessions nobody finished joining within the configured minutes."""
    cutoff = (now or timezone.now()) - timedelta(minutes=settings.ARENA_STALE_SESSION_MINUTES)
    stale = ArenaSession.objects.filter(status=ArenaSession.Status.OPEN, created_at__lt=cutoff)
    ids = list(stale.values_list("pk", flat=True))
    ArenaSession.objects.filter(pk__in=ids, status=ArenaSession.Status.OPEN).delete()
    return len(ids)
