"""Reading conversation sessions: a player's own, the latest on a challenge, a transcript."""

import uuid

from django.contrib.auth.models import AbstractBaseUser

from challenges.models import Challenge, PlaySession, SessionTurn
from players.models import EndUser, Membership


def _uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def session_of_player(*, session_id, account: AbstractBaseUser) -> PlaySession | None:
    """The session when `account` is its player; None for anyone else (they get a 404)."""
    found = _uuid(session_id)
    if found is None or not account.is_authenticated:
        return None
    return (
        PlaySession.objects.select_related("challenge", "challenge__workspace", "end_user")
        .filter(pk=found, end_user__account=account)
        .first()
    )


def session_visible_to(*, session_id, user: AbstractBaseUser) -> PlaySession | None:
    """The session for its player or a member of the challenge's workspace (its creators)."""
    found = _uuid(session_id)
    if found is None or not user.is_authenticated:
        return None
    session = PlaySession.objects.select_related("challenge", "end_user").filter(pk=found).first()
    if session is None:
        return None
    if session.end_user.account_id == user.pk:
        return session
    member = Membership.objects.filter(workspace_id=session.workspace_id, user=user).exists()
    return session if member else None


def session_turns(*, session: PlaySession) -> list[SessionTurn]:
    return list(SessionTurn.objects.filter(session=session).order_by("index"))


def session_history(*, session: PlaySession) -> tuple[tuple[str, str], ...]:
    """The earlier turns as the model is given them: (prompt, reply), masked, oldest first."""
    return tuple(
        SessionTurn.objects.filter(session=session)
        .order_by("index")
        .values_list("prompt", "response")
    )


def session_latest(*, challenge: Challenge, end_user: EndUser | None) -> PlaySession | None:
    """The player's most recent session on the challenge, whatever its state."""
    if end_user is None:
        return None
    return PlaySession.objects.filter(challenge=challenge, end_user=end_user).first()


def session_turns_left(*, session: PlaySession, challenge: Challenge) -> int:
    if session.state != PlaySession.State.OPEN:
        return 0
    return max(challenge.max_turns - session.turns_count, 0)
