"""What an event is about, named and linked for people: the header list and the mails.

Notifications sits below the apps whose events it carries, so each of them registers, in
its AppConfig.ready, how to name and link the subjects of its event types.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EventSubject:
    name: str
    path: str  # the subject's page on this site, from reverse()


# subject ids (as stored on events) → the subjects found; unknown ids are left out.
SubjectLookup = Callable[[list[str]], dict[str, EventSubject]]

_lookups: dict[str, SubjectLookup] = {}


def event_subject_lookup_register(*, event_types: Iterable[str], lookup: SubjectLookup) -> None:
    for event_type in event_types:
        _lookups[event_type] = lookup


def event_subjects(events: Iterable[Any]) -> dict[Any, EventSubject]:
    """Each event's subject by event id, with one lookup per kind of subject; an event whose
    subject is gone (a deleted challenge) has none."""
    events = list(events)
    wanted: dict[SubjectLookup, set[str]] = defaultdict(set)
    for event in events:
        lookup = _lookups.get(event.type)
        if lookup is not None:
            wanted[lookup].add(str(event.subject_id))
    found = {lookup: lookup(sorted(ids)) for lookup, ids in wanted.items()}
    subjects = {}
    for event in events:
        lookup = _lookups.get(event.type)
        subject = found[lookup].get(str(event.subject_id)) if lookup else None
        if subject is not None:
            subjects[event.id] = subject
    return subjects


def event_headline(event: Any, subject: EventSubject | None, *, to_creator: bool = False) -> str:
    """One line saying what happened, for the header list and the mail's subject (to the
    players it concerns), or for the creator's feed."""
    name = f"“{subject.name}”" if subject else None
    if event.type == "challenge_first_blood":
        played = "a challenge" if to_creator else "a challenge you played"
        return f"First blood: {name or played} was solved for the first time"
    if event.type == "first_blood_revoked":
        whose = "The" if to_creator else "Your"
        return f"{whose} first blood on {name or 'a challenge'} was withdrawn after a review"
    if event.type == "challenge_record_beaten":
        whose = "The" if to_creator else "Your"
        return f"{whose} record on {name or 'a challenge'} was beaten"
    if event.type == "wave_opened":
        return f"Wave {name or 'of challenges'} is open"
    if event.type == "wave_closed":
        return f"Wave {name or 'of challenges'} has closed"
    if event.type == "team_pairing_completed":
        return f"A pairing was judged on {name or 'a red/blue challenge'}"
    return event.type
