"""Arena reads, shaped as SpecArena's camelCase JSON and redacted for the viewer."""

import uuid
from typing import Any

from django.conf import settings
from django.db.models import Count, Q, QuerySet

from redblue.arena.registry import arena_types, scoring_strategies
from redblue.arena.services import OPERATOR_PREFIX, epoch_ms, message_payload
from redblue.models import (
    ArenaChallengeType,
    ArenaInvite,
    ArenaMessage,
    ArenaSession,
    ArenaUser,
    ScoringEntry,
)


def session_id_of(channel: str) -> uuid.UUID | None:
    """The session a channel name (`<id>` or `challenge_<id>`) belongs to."""
    bare = channel.removeprefix(OPERATOR_PREFIX)
    try:
        return uuid.UUID(bare)
    except (ValueError, AttributeError):
        return None


# --- types -------------------------------------------------------------------------


def arena_metadata_all() -> dict[str, dict[str, Any]]:
    rows = {row.name: row for row in ArenaChallengeType.objects.all()}
    found: dict[str, dict[str, Any]] = {}
    for name, type_class in sorted(arena_types().items()):
        metadata = type_metadata(type_class, rows.get(name))
        if metadata is not None:
            found[name] = metadata
    return found


def type_metadata(type_class, row: ArenaChallengeType | None) -> dict[str, Any] | None:
    """A type's ChallengeMetadata with the admin's overrides; None when it is disabled."""
    if row is not None and not row.enabled:
        return None
    return {**type_class.metadata(), **(row.metadata if row else {})}


def arena_metadata(*, name: str) -> dict[str, Any] | None:
    return arena_metadata_all().get(name)


# --- sessions ----------------------------------------------------------------------


def session_json(session: ArenaSession) -> dict[str, Any]:
    """The seed's `Challenge`. Private game state, scores and who is behind each invite
    stay hidden until the game ends."""
    ended = session.status == ArenaSession.Status.ENDED
    state: dict[str, Any] = {
        "status": session.status,
        "gameStarted": session.status != ArenaSession.Status.OPEN,
        "gameEnded": ended,
        "scores": session.scores
        if ended
        else [{"security": 0, "utility": 0} for _ in session.invites],
        "players": list(session.players),
        "playerIdentities": dict(session.player_identities) if ended else {},
    }
    if ended:
        state["completedAt"] = epoch_ms(session.completed_at)
        state["attributions"] = list(session.attributions)
    return {
        "id": str(session.pk),
        "name": session.name,
        "createdAt": epoch_ms(session.created_at),
        "challengeType": session.challenge_type_id,
        "invites": list(session.invites),
        "state": state,
        "gameState": session.game_state if ended else {},
        "gameCategory": session.game_category,
    }


def arena_sessions(*, challenge_type: str | None = None, status: str | None = None) -> QuerySet:
    sessions = ArenaSession.objects.all()
    if challenge_type:
        sessions = sessions.filter(challenge_type_id=challenge_type)
    if status:
        sessions = sessions.filter(status=status)
    return sessions.order_by("-created_at")


def arena_session(*, session_id: Any) -> ArenaSession | None:
    parsed = session_id if isinstance(session_id, uuid.UUID) else session_id_of(str(session_id))
    if parsed is None:
        return None
    return ArenaSession.objects.filter(pk=parsed).first()


def arena_session_by_invite(*, invite: str) -> ArenaSession | None:
    found = ArenaInvite.objects.filter(code=invite).select_related("session").first()
    return found.session if found else None


def profiles_for_sessions(sessions: list[ArenaSession]) -> dict[str, dict[str, Any]]:
    """Profiles of the revealed players (ended games only) of these sessions."""
    user_ids = {
        user
        for session in sessions
        if session.status == ArenaSession.Status.ENDED
        for user in session.player_identities.values()
        if user
    }
    return arena_profiles(user_ids=sorted(user_ids))


def arena_user_sessions(*, user_id: str) -> QuerySet:
    session_ids = ArenaInvite.objects.filter(user_id=user_id).values("session_id")
    return ArenaSession.objects.filter(
        pk__in=session_ids, status=ArenaSession.Status.ENDED
    ).order_by("-completed_at")


# --- messages ----------------------------------------------------------------------


def message_json(
    message: ArenaMessage, *, viewer: str | None, revealed: bool = False
) -> dict[str, Any]:
    return redacted_for(message_payload(message), viewer=viewer, revealed=revealed)


def redacted_for(
    payload: dict[str, Any], *, viewer: str | None, revealed: bool = False
) -> dict[str, Any]:
    """A message as `viewer` may see it: a DM to and from others has empty content."""
    to = payload.get("to")
    if revealed or not to or (viewer is not None and viewer in (to, payload["from"])):
        return payload
    return {**payload, "content": "", "redacted": True}


def channel_revealed(channel: str) -> bool:
    """A session's operator channel shows every message to everyone once the game ended
    (SpecArena's reveal); DMs elsewhere stay redacted."""
    if not channel.startswith(OPERATOR_PREFIX):
        return False
    session_id = session_id_of(channel)
    status = (
        ArenaSession.objects.filter(pk=session_id).values_list("status", flat=True).first()
        if session_id is not None
        else None
    )
    return channel_revealed_when(channel=channel, status=status)


def channel_revealed_when(*, channel: str, status: str | None) -> bool:
    """`channel_revealed` for the status of the session the channel names (None: none)."""
    return channel.startswith(OPERATOR_PREFIX) and status == ArenaSession.Status.ENDED


def channel_messages(*, channel: str, viewer: str | None, index: int = 0) -> list[dict[str, Any]]:
    """The messages of any channel from `index` on, redacted for `viewer`."""
    revealed = channel_revealed(channel)
    messages = ArenaMessage.objects.filter(channel=channel, index__gte=index).order_by("index")
    return [message_json(message, viewer=viewer, revealed=revealed) for message in messages]


def viewer_invite(*, session: ArenaSession, user_id: str) -> str | None:
    """The invite a known user holds in this session (for players on the site's pages)."""
    return (
        ArenaInvite.objects.filter(session=session, user_id=user_id, player_index__isnull=False)
        .values_list("code", flat=True)
        .first()
    )


# --- profiles ----------------------------------------------------------------------


def profile_json(user: ArenaUser) -> dict[str, Any]:
    data: dict[str, Any] = {"userId": user.user_id}
    if user.username:
        data["username"] = user.username
    if user.model:
        data["model"] = user.model
    return data


def arena_profiles(*, user_ids: list[str]) -> dict[str, dict[str, Any]]:
    if not user_ids:
        return {}
    return {
        user.user_id: profile_json(user) for user in ArenaUser.objects.filter(user_id__in=user_ids)
    }


def arena_users() -> QuerySet:
    return ArenaUser.objects.order_by("user_id")


def arena_user(*, user_id: str) -> ArenaUser | None:
    return ArenaUser.objects.filter(user_id=user_id).first()


# --- scoring and stats -------------------------------------------------------------


def _entry_json(entry: ScoringEntry, profiles: dict[str, dict[str, Any]]) -> dict[str, Any]:
    profile = profiles.get(entry.player_id, {})
    return {
        "playerId": entry.player_id,
        "gamesPlayed": entry.games_played,
        "metrics": entry.metrics,
        "username": profile.get("username"),
        "model": profile.get("model"),
    }


def _ranked(entries: list[ScoringEntry], metric_keys: list[str]) -> list[ScoringEntry]:
    def rank(entry: ScoringEntry) -> tuple:
        return (*(-float(entry.metrics.get(key, 0)) for key in metric_keys), -entry.games_played)

    return sorted(entries, key=rank)


def _metric_keys(strategy: str) -> list[str]:
    found = scoring_strategies().get(strategy)
    return [metric["key"] for metric in found.metrics] if found else []


def scoring_global(*, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
    entries = list(ScoringEntry.objects.filter(challenge_type=ScoringEntry.GLOBAL))
    ranked = _ranked(entries, _metric_keys(settings.ARENA_GLOBAL_STRATEGY))
    page = ranked[offset : offset + limit]
    profiles = arena_profiles(user_ids=[entry.player_id for entry in page])
    return [_entry_json(entry, profiles) for entry in page]


def scoring_for_type(*, challenge_type: str, limit: int = 100) -> dict[str, list[dict[str, Any]]]:
    by_strategy: dict[str, list[ScoringEntry]] = {}
    for entry in ScoringEntry.objects.filter(challenge_type=challenge_type):
        by_strategy.setdefault(entry.strategy, []).append(entry)
    profiles = arena_profiles(
        user_ids=sorted({e.player_id for entries in by_strategy.values() for e in entries})
    )
    return {
        strategy: [
            _entry_json(entry, profiles)
            for entry in _ranked(entries, _metric_keys(strategy))[:limit]
        ]
        for strategy, entries in sorted(by_strategy.items())
    }


def scoring_for_player(*, user_id: str) -> dict[str, Any]:
    entries = list(ScoringEntry.objects.filter(player_id=user_id))
    profiles = arena_profiles(user_ids=[user_id])
    challenges: dict[str, dict[str, Any]] = {}
    global_entry = None
    for entry in entries:
        if entry.challenge_type == ScoringEntry.GLOBAL:
            global_entry = _entry_json(entry, profiles)
        else:
            challenges.setdefault(entry.challenge_type, {})[entry.strategy] = _entry_json(
                entry, profiles
            )
    return {"global": global_entry, "challenges": challenges}


def arena_stats() -> dict[str, Any]:
    ended = ArenaSession.objects.filter(status=ArenaSession.Status.ENDED)
    per_type = {
        row["challenge_type_id"]: {"gamesPlayed": row["games"]}
        for row in ended.values("challenge_type_id").annotate(games=Count("pk"))
    }
    for name in arena_types():
        per_type.setdefault(name, {"gamesPlayed": 0})
    participants = (
        ArenaInvite.objects.filter(session__status=ArenaSession.Status.ENDED)
        .exclude(user_id="")
        .values("user_id")
        .distinct()
        .count()
    )
    return {
        "challenges": dict(sorted(per_type.items())),
        "global": {"participants": participants, "gamesPlayed": ended.count()},
    }


def open_sessions_count_by_type() -> dict[str, int]:
    rows = ArenaSession.objects.values("challenge_type_id").annotate(
        open=Count("pk", filter=Q(status=ArenaSession.Status.OPEN))
    )
    return {row["challenge_type_id"]: row["open"] for row in rows}


# --- pages -------------------------------------------------------------------------


def site_viewer_invite(*, session: ArenaSession, account) -> str | None:
    """The invite a logged-in site user plays with in this session, if any."""
    if account is None or not account.is_authenticated:
        return None
    user = ArenaUser.objects.filter(account=account).first()
    return viewer_invite(session=session, user_id=user.user_id) if user else None


def transcript(
    *, session: ArenaSession, viewer: str | None, after: dict[str, int] | None = None
) -> list[dict[str, Any]]:
    """Both channels of a session, oldest first, from the given next indexes on."""
    after = after or {}
    channels = Q()
    for channel in (session.operator_channel, session.chat_channel):
        channels |= Q(channel=channel, index__gte=after.get(channel, 0))
    messages = ArenaMessage.objects.filter(channels).order_by("timestamp_ms", "pk")
    ended = session.status == ArenaSession.Status.ENDED
    return [
        message_json(
            message, viewer=viewer, revealed=ended and message.channel == session.operator_channel
        )
        for message in messages
    ]


def session_player_names(*, session: ArenaSession) -> dict[str, str]:
    """Each seat's invite code → the name to show for it, never the code itself: "Player N"
    by seat while the game runs (who is behind a seat stays hidden until the end, as in
    `session_json`), then the player's arena username (a site player's display name)."""
    names = {invite: f"Player {seat}" for seat, invite in enumerate(session.invites, start=1)}
    if session.status != ArenaSession.Status.ENDED:
        return names
    identities = session.player_identities or {}
    profiles = arena_profiles(user_ids=list(identities.values()))
    for invite, user_id in identities.items():
        username = profiles.get(user_id, {}).get("username")
        if username and invite in names:
            names[invite] = username
    return names


def scatter_points(*, challenge_type: str) -> list[tuple[str, float, float]]:
    entries = list(ScoringEntry.objects.filter(challenge_type=challenge_type, strategy="average"))
    profiles = arena_profiles(user_ids=[entry.player_id for entry in entries])
    return [
        (
            profiles.get(entry.player_id, {}).get("username") or entry.player_id[:10],
            float(entry.metrics.get("average:security", 0)),
            float(entry.metrics.get("average:utility", 0)),
        )
        for entry in entries
    ]
