"""Several anonymised targets per challenge (SPEC §9): which model a play goes to.

A challenge may list `targets` — `{codename, target, target_model, target_config}` each —
and say how a play gets one (`target_assignment`). Built like the kinds of play
(challenges/modes/): `TargetAssignment` says what an assignment rule does, `ASSIGNMENTS`
names the class for each rule, and every path (attempts, streamed attempts, sessions) asks
`target_pick()`; nothing else tests the rule. Players see codenames only: a codename, never
a model, is stored on the attempt and the session, shown on boards and carried by events,
until the creator sets `reveal_targets`.
"""

import hashlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

from django.db import connection
from django.utils.module_loading import import_string
from rest_framework import serializers

from challenges.models import Challenge
from core.errors import ApplicationError
from players.models import EndUser

MAX_TARGETS = 12
CODENAME_MAX_CHARS = 40


@dataclass(frozen=True)
class Target:
    """One model a challenge's players attack; `codename` is empty for a challenge's own
    single target."""

    codename: str
    target: str
    target_model: str = ""
    target_config: dict[str, Any] = field(default_factory=dict)


class TargetEntrySerializer(serializers.Serializer):
    codename = serializers.CharField(max_length=CODENAME_MAX_CHARS)
    target = serializers.ChoiceField(Challenge.Target.choices)
    target_model = serializers.CharField(max_length=200, required=False, allow_blank=True)
    target_config = serializers.DictField(required=False)

    def validate_codename(self, value: str) -> str:
        value = value.strip()
        if not value:
            raise serializers.ValidationError("A codename such as 'Model Teal'.")
        return value


def targets_clean(targets: Any) -> list[dict[str, Any]]:
    """The list as stored: validated entries with every key present."""
    cleaned = []
    for entry in targets or []:
        checked = TargetEntrySerializer(data=entry)
        checked.is_valid(raise_exception=True)
        data = checked.validated_data
        cleaned.append(
            {
                "codename": data["codename"],
                "target": data["target"],
                "target_model": data.get("target_model", ""),
                "target_config": dict(data.get("target_config") or {}),
            }
        )
    return cleaned


def roster(challenge: Challenge) -> list[Target]:
    """The challenge's targets, in the creator's order; its own target when it lists none."""
    listed = [
        Target(
            codename=str(entry.get("codename", "")),
            target=str(entry.get("target", Challenge.Target.OFFLINE)),
            target_model=str(entry.get("target_model", "")),
            target_config=dict(entry.get("target_config") or {}),
        )
        for entry in (challenge.targets or [])
        if isinstance(entry, dict)
    ]
    if listed:
        return listed
    return [
        Target(
            codename="",
            target=challenge.target,
            target_model=challenge.target_model,
            target_config=dict(challenge.target_config or {}),
        )
    ]


def has_several_targets(challenge: Challenge) -> bool:
    return bool(challenge.targets)


def codenames(challenge: Challenge) -> list[str]:
    return [target.codename for target in roster(challenge) if target.codename]


def target_named(challenge: Challenge, codename: str) -> Target:
    """The target behind a codename (a session's, kept from its start); the challenge's own
    target for an empty codename."""
    for target in roster(challenge):
        if target.codename == codename:
            return target
    raise unknown_codename(challenge)


def unknown_codename(challenge: Challenge) -> ApplicationError:
    names = ", ".join(codenames(challenge))
    message = f"No model has that codename here; choose one of: {names}."
    return ApplicationError(message, fields={"codename": [message]})


def revealed_targets(challenge: Challenge) -> list[dict[str, str]] | None:
    """`[{codename, model}]` once the creator reveals them; None until then."""
    if not has_several_targets(challenge) or not challenge.reveal_targets:
        return None
    return [
        {"codename": target.codename, "model": target.target_model or target.target}
        for target in roster(challenge)
    ]


# --- assignment ------------------------------------------------------------------------------


class TargetAssignment:
    """How a play of a challenge with several targets gets one."""

    name: ClassVar[str]
    # The challenge page shows a codename picker.
    player_chooses: ClassVar[bool] = False

    def pick(self, *, challenge: Challenge, end_user: EndUser, codename: str) -> Target:
        raise NotImplementedError


class RoundRobin(TargetAssignment):
    """Each play of a player goes to the next target in turn, starting from a place fixed
    by the player (so players spread over the targets). The turn is counted by one
    INSERT … ON CONFLICT statement: concurrent plays of one player get different turns."""

    name = "round_robin"

    def pick(self, *, challenge, end_user, codename):
        if codename:
            message = "This challenge gives you its models in turn; send no codename."
            raise ApplicationError(message, fields={"codename": [message]})
        targets = roster(challenge)
        start = int(hashlib.sha256(str(end_user.pk).encode()).hexdigest()[:8], 16)
        return targets[(start + _turn_taken(challenge=challenge, end_user=end_user)) % len(targets)]


class PlayerChoice(TargetAssignment):
    """The player picks a codename."""

    name = "choice"
    player_chooses = True

    def pick(self, *, challenge, end_user, codename):
        if not codename:
            message = "Choose a model: " + ", ".join(codenames(challenge)) + "."
            raise ApplicationError(message, fields={"codename": [message]})
        return target_named(challenge, codename)


ASSIGNMENTS: dict[str, str] = {
    Challenge.TargetAssignment.ROUND_ROBIN: "challenges.targets.RoundRobin",
    Challenge.TargetAssignment.CHOICE: "challenges.targets.PlayerChoice",
}


@cache
def _assignment_class(name: str) -> type[TargetAssignment]:
    return import_string(ASSIGNMENTS[name])


def assignment_for(challenge: Challenge) -> TargetAssignment:
    return _assignment_class(challenge.target_assignment)()


def codename_choices(challenge: Challenge) -> list[str]:
    """The codenames a player picks from (the page's picker); empty when they do not pick."""
    if not has_several_targets(challenge) or not assignment_for(challenge).player_chooses:
        return []
    return codenames(challenge)


def target_pick(*, challenge: Challenge, end_user: EndUser, codename: str = "") -> Target:
    """The target of a new play (an attempt, or a session at its start)."""
    codename = (codename or "").strip()
    if not has_several_targets(challenge):
        if codename:
            message = "This challenge has one model; send no codename."
            raise ApplicationError(message, fields={"codename": [message]})
        return roster(challenge)[0]
    return assignment_for(challenge).pick(challenge=challenge, end_user=end_user, codename=codename)


def _turn_taken(*, challenge: Challenge, end_user: EndUser) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO challenges_targetturn (challenge_id, end_user_id, given)
            VALUES (%s, %s, 1)
            ON CONFLICT (challenge_id, end_user_id)
            DO UPDATE SET given = challenges_targetturn.given + 1
            RETURNING given
            """,
            [challenge.pk, end_user.pk],
        )
        return cursor.fetchone()[0] - 1
