"""The kinds of play (SPEC §9): one interface, one module per kind, picked by `mode`.

Built as Django's authentication and storage backends are: `PlayMode` says what a kind of
play does, `PLAY_MODES` names the class for each `Challenge.mode`, and every caller — the
web API and pages, the bridge, its fast lane, the admin — asks `play_mode_for(challenge)`
instead of testing the mode itself. A new kind is one module here plus its templates.
"""

from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from django.utils.module_loading import import_string

from challenges.models import Challenge
from core.errors import ApplicationError

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from players.models import EndUser

PLAY_MODES: dict[str, str] = {
    Challenge.Mode.SINGLE: "challenges.modes.single.SinglePlay",
    Challenge.Mode.CONVERSATION: "challenges.modes.conversation.ConversationPlay",
    Challenge.Mode.AGENT: "challenges.modes.agent.AgentPlay",
}


class PlayMode:
    """What one kind of play does on every path. Methods a kind does not offer refuse with
    a 409 naming the way it is played."""

    name: ClassVar[str]
    # The bridge's fast lane records one reply judged by rules (challenges/bridge/lane.py);
    # a kind that needs more (a session's history) has its calls handed to Django's path.
    lane_records: ClassVar[bool] = False
    # The play panel of the challenge page.
    play_template: ClassVar[str]
    # The challenge form's fields this kind uses (the admin shows them in its section).
    admin_fields: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def admin_sections(cls, classes: tuple[str, ...]) -> list[tuple[str, dict]]:
        """The challenge form's own sections for this kind, after "Kind of play" (`classes`:
        the admin's show-when classes for this mode)."""
        return []

    def refused(self, message: str) -> ApplicationError:
        return ApplicationError(message, code="wrong_mode", status=409)

    async def attempt_async(
        self,
        *,
        challenge: Challenge,
        account: "AbstractBaseUser",
        prompt: str,
        ip: str,
        source: str,
        codename: str = "",
    ):
        """One prompt judged and recorded (`codename`: the player's pick among several
        targets, challenges/targets.py): a `PlayResult` (challenges/services/play.py)."""
        raise self.refused("This challenge is not played one prompt at a time.")

    async def attempt_stream_start(
        self,
        *,
        challenge: Challenge,
        account: "AbstractBaseUser",
        prompt: str,
        ip: str,
        source: str,
        codename: str = "",
    ):
        """The checks of a streamed attempt: a `StartedPlay` (challenges.services.play_stream)."""
        raise self.refused("This challenge is not played one prompt at a time.")

    def session_open(
        self, *, challenge: Challenge, account: "AbstractBaseUser", ip: str, codename: str = ""
    ):
        """A new session of turns: a `PlaySession`, given its target when it opens."""
        raise self.refused("This challenge is not played in sessions; send it an attempt.")

    async def run_async(
        self,
        *,
        challenge: Challenge,
        account: "AbstractBaseUser",
        slots: dict[str, str],
        ip: str,
        source: str,
        codename: str = "",
    ):
        """One run of an agent scenario with the player's slot texts: an `AgentRunResult`
        (challenges/services/agent_runs.py)."""
        raise self.refused("This challenge is not an agent scenario; it takes no runs.")

    async def bridge_evaluate(self, *, call: Any, plan: Any):
        """The bridge's challenge-evaluator for a stored challenge: a `BridgeAnswer`."""
        raise NotImplementedError

    def page_context(self, *, challenge: Challenge, end_user: "EndUser | None") -> dict:
        """What the play panel shows this player beyond the page's common context."""
        return {}


@cache
def _mode_class(name: str) -> type[PlayMode]:
    return import_string(PLAY_MODES[name])


def play_mode_for(challenge: Challenge) -> PlayMode:
    """The kind of play of a challenge (an unknown mode is a configuration error)."""
    return _mode_class(challenge.mode)()


def play_mode_settings() -> tuple[str, ...]:
    """Every kind's own challenge fields, in order, for the challenge form's section."""
    names: list[str] = []
    for name in PLAY_MODES:
        names += [field for field in _mode_class(name).admin_fields if field not in names]
    return tuple(names)


def play_mode_sections(values_class) -> list[tuple[str, dict]]:
    """Every kind's own sections of the challenge form; `values_class(mode)` gives the
    section classes that show it for that mode."""
    sections: list[tuple[str, dict]] = []
    for name in PLAY_MODES:
        sections += _mode_class(name).admin_sections(values_class(name))
    return sections
