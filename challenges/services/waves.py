"""Waves (SPEC §10): sets of challenges that open and close together on a schedule.

A wave's window is what decides play — `Challenge.play_window` narrows a challenge's window
by its wave's, so every path (web, stream, sessions, the bridge and its lane) answers 409
`challenge_closed` outside it to the second, beat or no beat. The beat task
(`waves_tick`, every minute) only announces: it moves a wave's `state` with a conditional
UPDATE, so of two ticks (or two beat processes) one wins, and the event's unique key is a
second guard — each opening and closing is in the feed once, and the opening is mailed to
the workspace's players once.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from challenges.models import Challenge, Wave
from core.api import valid_uuids
from core.errors import ApplicationError
from notifications.models import Event
from notifications.services import epoch_ms, event_emit_on_commit
from players.models import Workspace
from players.selectors import player_account_ids_of_workspace

NAME_MAX = Wave._meta.get_field("name").max_length
CHALLENGES_MAX = 200


@dataclass(frozen=True)
class WaveTick:
    opened: int
    closed: int


def _invalid(field: str, message: str) -> ApplicationError:
    return ApplicationError(message, fields={field: [message]})


def wave_check(*, name: str, opens_at: datetime, closes_at: datetime) -> str:
    name = (name or "").strip()
    if not name:
        raise _invalid("name", "A name such as “Week 1”.")
    if len(name) > NAME_MAX:
        raise _invalid("name", f"At most {NAME_MAX} characters.")
    if opens_at is None or closes_at is None:
        raise _invalid("opens_at" if opens_at is None else "closes_at", "Required.")
    if closes_at <= opens_at:
        raise _invalid("closes_at", "A wave closes after it opens.")
    return name


def _challenges_of(*, workspace_id: Any, challenge_ids: list[Any]) -> list[Challenge]:
    if not isinstance(challenge_ids, list):
        raise _invalid("challenges", "A list of challenge ids.")
    if len(challenge_ids) > CHALLENGES_MAX:
        raise _invalid("challenges", f"At most {CHALLENGES_MAX} challenges.")
    found = {
        str(challenge.id): challenge
        for challenge in Challenge.objects.filter(
            workspace_id=workspace_id, id__in=valid_uuids(challenge_ids)
        )
    }
    # Another workspace's challenge reads exactly like one that does not exist.
    unknown = [
        str(raw)[:64]
        for raw in challenge_ids
        if not any(str(parsed) in found for parsed in valid_uuids([raw]))
    ]
    if unknown:
        raise _invalid("challenges", "No challenge of this workspace: " + ", ".join(unknown))
    return list(found.values())


@transaction.atomic
def wave_create(
    *,
    workspace: Workspace,
    name: str,
    challenge_ids: list[Any],
    opens_at: datetime,
    closes_at: datetime,
) -> Wave:
    name = wave_check(name=name, opens_at=opens_at, closes_at=closes_at)
    challenges = _challenges_of(workspace_id=workspace.id, challenge_ids=challenge_ids)
    wave = Wave.objects.create(
        workspace=workspace, name=name, opens_at=opens_at, closes_at=closes_at
    )
    wave.challenges.set(challenges)
    return wave


@transaction.atomic
def wave_update(
    *,
    wave: Wave,
    name: str | None = None,
    challenge_ids: list[Any] | None = None,
    opens_at: datetime | None = None,
    closes_at: datetime | None = None,
) -> Wave:
    """Change what was given; a wave moved to other times is announced again when the beat
    reaches them."""
    opens_at = opens_at or wave.opens_at
    closes_at = closes_at or wave.closes_at
    wave.name = wave_check(
        name=wave.name if name is None else name, opens_at=opens_at, closes_at=closes_at
    )
    if (opens_at, closes_at) != (wave.opens_at, wave.closes_at):
        wave.opens_at, wave.closes_at = opens_at, closes_at
        wave.state = Wave.State.SCHEDULED
    wave.save()
    if challenge_ids is not None:
        wave.challenges.set(
            _challenges_of(workspace_id=wave.workspace_id, challenge_ids=challenge_ids)
        )
    return wave


def wave_delete(*, wave: Wave) -> None:
    wave.delete()


def _payload(wave: Wave) -> dict[str, Any]:
    challenges = list(wave.challenges.order_by("name", "id"))
    return {
        "wave_id": str(wave.id),
        "name": wave.name,
        "challenge_ids": [str(challenge.id) for challenge in challenges],
        "challenge_names": [challenge.name for challenge in challenges],
        "opens_at": epoch_ms(wave.opens_at),
        "closes_at": epoch_ms(wave.closes_at),
    }


def _window_key(wave: Wave) -> str:
    # A wave moved to new times is a new occurrence; the same times are the same one.
    return "-".join(
        f"{moment.astimezone(UTC):%Y%m%dT%H%M%S}" for moment in (wave.opens_at, wave.closes_at)
    )


def _announce(wave: Wave, *, event_type: str, now: datetime, recipients: list[Any]) -> None:
    event_emit_on_commit(
        type=event_type,
        workspace_id=wave.workspace_id,
        subject_id=wave.id,
        dedupe_key=_window_key(wave),
        payload=_payload(wave),
        occurred_at=now,
        recipient_account_ids=recipients,
    )


def _move(wave_id: Any, *, from_states: list[str], to_state: str) -> Wave | None:
    """The wave, when this call moved it (a conditional UPDATE: one mover wins)."""
    moved = Wave.objects.filter(pk=wave_id, state__in=from_states).update(state=to_state)
    return Wave.objects.filter(pk=wave_id).first() if moved else None


def waves_tick(*, now: datetime | None = None) -> WaveTick:
    """Open the waves whose window has begun and close those whose window has ended, each
    announced once in the feed; an opening is mailed to the workspace's players."""
    now = now or timezone.now()
    opened = closed = 0
    due_open = Wave.objects.filter(
        state=Wave.State.SCHEDULED, opens_at__lte=now, closes_at__gt=now
    ).values_list("id", flat=True)
    for wave_id in list(due_open):
        with transaction.atomic():
            wave = _move(wave_id, from_states=[Wave.State.SCHEDULED], to_state=Wave.State.OPEN)
            if wave is not None:
                recipients = player_account_ids_of_workspace(workspace_id=wave.workspace_id)
                _announce(wave, event_type=Event.Type.WAVE_OPENED, now=now, recipients=recipients)
                opened += 1
    # A wave whose whole window passed while beat was away closes without opening.
    due_close = Wave.objects.filter(
        state__in=[Wave.State.SCHEDULED, Wave.State.OPEN], closes_at__lte=now
    ).values_list("id", flat=True)
    for wave_id in list(due_close):
        with transaction.atomic():
            wave = _move(
                wave_id,
                from_states=[Wave.State.SCHEDULED, Wave.State.OPEN],
                to_state=Wave.State.CLOSED,
            )
            if wave is not None:
                _announce(wave, event_type=Event.Type.WAVE_CLOSED, now=now, recipients=[])
                closed += 1
    return WaveTick(opened=opened, closed=closed)
