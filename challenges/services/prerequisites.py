"""Prerequisites: a challenge that opens only once others of its workspace are solved.

The rule that locks a challenge is `challenges.selectors.levels.level_locked_reason`; this
module only writes the relation, refusing another workspace's challenge and any cycle
(a cycle would lock its challenges for everyone, for good).
"""

import uuid
from collections.abc import Iterable
from typing import Any

from django.db import transaction

from challenges.models import Challenge, ChallengePrerequisite
from challenges.selectors.levels import prerequisites_of
from core.errors import ApplicationError
from players.models import Workspace

MAX_PREREQUISITES = 50
FIELD = "prerequisite_ids"


def _parsed(prerequisite_ids: Any) -> tuple[list[uuid.UUID], list[str]]:
    if not isinstance(prerequisite_ids, list | tuple):
        raise ApplicationError(
            f"'{FIELD}' must be a list of challenge ids.", fields={FIELD: ["A list of ids."]}
        )
    parsed, malformed = [], []
    for raw in prerequisite_ids:
        try:
            parsed.append(raw if isinstance(raw, uuid.UUID) else uuid.UUID(str(raw)))
        except ValueError:
            malformed.append(str(raw)[:64])
    return parsed, malformed


def _path_back(
    edges: dict[uuid.UUID, set[uuid.UUID]], start: uuid.UUID, goal: uuid.UUID
) -> list[uuid.UUID] | None:
    """A chain start → … → goal along `edges` (challenge → its prerequisites), or None."""
    stack: list[tuple[uuid.UUID, list[uuid.UUID]]] = [(start, [start])]
    seen: set[uuid.UUID] = set()
    while stack:
        node, path = stack.pop()
        if node == goal:
            return path
        if node in seen:
            continue
        seen.add(node)
        for following in sorted(edges.get(node, ()), reverse=True):
            stack.append((following, [*path, following]))
    return None


def prerequisite_errors(
    *, challenge_id: uuid.UUID | None, workspace_id: Any, prerequisite_ids: Iterable[Any]
) -> list[str]:
    """What is wrong with making `prerequisite_ids` the prerequisites of the challenge
    (`challenge_id` None for one not saved yet): an empty list when nothing is."""
    ids, malformed = _parsed(list(prerequisite_ids))
    if len(ids) + len(malformed) > MAX_PREREQUISITES:
        return [f"A challenge has at most {MAX_PREREQUISITES} prerequisites."]
    errors = []
    duplicates = sorted({str(i) for i in ids if ids.count(i) > 1})
    if duplicates:
        errors.append("Each prerequisite may appear once: " + ", ".join(duplicates) + ".")
    if challenge_id is not None and challenge_id in ids:
        errors.append("A challenge cannot require itself.")
    names = dict(Challenge.objects.filter(workspace_id=workspace_id).values_list("id", "name"))
    # Another workspace's challenge reads exactly like one that does not exist.
    unknown = malformed + [str(i) for i in ids if i not in names]
    if unknown:
        errors.append(
            "These are not challenges of this challenge's workspace: " + ", ".join(unknown) + "."
        )
    if errors or challenge_id is None:
        return errors
    edges: dict[uuid.UUID, set[uuid.UUID]] = {}
    for needs, needed in (
        ChallengePrerequisite.objects.filter(challenge__workspace_id=workspace_id)
        .exclude(challenge_id=challenge_id)
        .values_list("challenge_id", "prerequisite_id")
    ):
        edges.setdefault(needs, set()).add(needed)
    for prerequisite_id in ids:
        chain = _path_back(edges, prerequisite_id, challenge_id)
        if chain:
            loop = " → ".join(f"“{names[i]}”" for i in [challenge_id, *chain])
            errors.append(
                f"That would make a cycle, so none of them could ever be played: {loop} "
                "(each needs the next one solved first)."
            )
            break
    return errors


def challenge_set_prerequisites(
    *, challenge: Challenge, prerequisite_ids: list[Any]
) -> list[Challenge]:
    """Make `prerequisite_ids` the challenge's prerequisites; all or nothing."""
    with transaction.atomic():
        # Edits of one workspace's prerequisites queue up, so two edits that are each fine
        # cannot together close a cycle. NO KEY: rows that refer to the workspace still go in.
        Workspace.objects.select_for_update(no_key=True).filter(pk=challenge.workspace_id).first()
        errors = prerequisite_errors(
            challenge_id=challenge.id,
            workspace_id=challenge.workspace_id,
            prerequisite_ids=prerequisite_ids,
        )
        if errors:
            raise ApplicationError(" ".join(errors), fields={FIELD: errors})
        ids, _ = _parsed(prerequisite_ids)
        ChallengePrerequisite.objects.filter(challenge=challenge).delete()
        ChallengePrerequisite.objects.bulk_create(
            ChallengePrerequisite(challenge=challenge, prerequisite_id=prerequisite_id)
            for prerequisite_id in ids
        )
        # A new `updated_at` tells every process that cached the challenge (the bridge
        # lane) to read it again.
        challenge.save(update_fields=["updated_at"])
    return prerequisites_of(challenge=challenge)
