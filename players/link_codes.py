"""Linking a Dify identity to a site account's player (SPEC §3: both resolve to one EndUser).

A logged-in player makes a one-time link code for a workspace; a Dify run in that
workspace sends it with its `user`. From then on the Dify EndUser points at the account's
EndUser (`linked_to`): its runs record as that player, and challenges.bridge.linking moves
its earlier attempts over and makes the two board rows one, keeping the better entry
under the challenge's strategy. Undoing a link stops that from then on; what was merged
stays.

Locking order, so concurrent links and recordings keep one board row per player: a link
locks the account's EndUser, then the Dify EndUser, then their board rows; a bridge
recording locks the Dify EndUser (`end_user_for_recording`) before it writes. The locks
are FOR NO KEY UPDATE, so the foreign-key checks of rows written meanwhile (attempts
pointing at the player) do not wait on them.
"""

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.errors import ApplicationError, NotFoundError
from players.models import EndUser, LinkCode, Workspace
from players.services import end_user_for_account, end_user_for_external_id

# No 0/O, 1/I/L: codes are read off a screen and typed into a Dify form.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 10
DEFAULT_TTL_SECONDS = 600
LINK_CODE_FIELD = "link_code"


@dataclass(frozen=True)
class IssuedLinkCode:
    code: str
    expires_at: datetime
    workspace: Workspace


def _normalised(code: str) -> str:
    return "".join(character for character in code.upper() if character.isalnum())


def link_code_hash(code: str) -> str:
    return hashlib.sha256(_normalised(code).encode()).hexdigest()


def link_code_create(*, account: AbstractBaseUser, workspace: Workspace) -> IssuedLinkCode:
    """A new code for `account` in `workspace`; the plain code exists only in the answer."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    code = f"{raw[:5]}-{raw[5:]}"
    expires_at = timezone.now() + timedelta(
        seconds=getattr(settings, "LINK_CODE_TTL_SECONDS", DEFAULT_TTL_SECONDS)
    )
    LinkCode.objects.create(
        account=account, workspace=workspace, code_hash=link_code_hash(code), expires_at=expires_at
    )
    return IssuedLinkCode(code=code, expires_at=expires_at, workspace=workspace)


def _refused(message: str) -> ApplicationError:
    return ApplicationError(message, code="invalid_link_code", fields={LINK_CODE_FIELD: [message]})


@dataclass(frozen=True)
class Link:
    player: EndUser  # the account's EndUser
    dify: EndUser
    new: bool  # False when the Dify identity was already linked to this player


@transaction.atomic
def end_user_link_by_code(*, workspace: Workspace, external_id: str, code: str) -> Link:
    """Link the Dify identity `external_id` to the account that made `code`. The code must
    be unused, unexpired and from this workspace. Both EndUsers stay locked until the
    caller's transaction ends: call it inside the transaction that merges their boards
    (challenges.bridge.linking)."""
    link_code = (
        LinkCode.objects.select_for_update(of=("self",), no_key=True)
        .filter(code_hash=link_code_hash(code), workspace=workspace)
        .select_related("account")
        .first()
    )
    if link_code is None:
        raise _refused("Unknown link code for this workspace.")
    if link_code.used_at is not None:
        raise _refused("This link code was already used; make a new one on your profile.")
    if link_code.expires_at <= timezone.now():
        raise _refused("This link code has expired; make a new one on your profile.")
    player = end_user_for_account(workspace=workspace, account=link_code.account)
    dify = end_user_for_external_id(workspace=workspace, external_id=external_id)
    # The order of these locks is the module's rule (see the docstring).
    player = EndUser.objects.select_for_update(no_key=True).get(pk=player.pk)
    dify = EndUser.objects.select_for_update(no_key=True).get(pk=dify.pk)
    if dify.linked_to_id not in (None, player.pk):
        raise _refused("This Dify user is already linked to another account.")
    new = dify.linked_to_id is None
    if new:
        dify.linked_to = player
        dify.linked_at = timezone.now()
        dify.save(update_fields=["linked_to", "linked_at"])
    link_code.used_at = timezone.now()
    link_code.used_by = dify
    link_code.save(update_fields=["used_at", "used_by"])
    return Link(player=player, dify=dify, new=new)


def end_user_for_recording(*, end_user: EndUser) -> EndUser:
    """The player an attempt by `end_user` is recorded for, read under a row lock inside
    the recording transaction, so a link made meanwhile is either seen or waits."""
    locked = EndUser.objects.select_for_update(no_key=True).get(pk=end_user.pk)
    if locked.linked_to_id is None:
        return locked
    return EndUser.objects.get(pk=locked.linked_to_id)


def player_for_external_id(*, workspace: Workspace, external_id: str) -> EndUser:
    """The player a Dify `user` plays as: its own EndUser, or the account's it is linked to."""
    end_user = end_user_for_external_id(workspace=workspace, external_id=external_id)
    return end_user.linked_to if end_user.linked_to_id else end_user


@transaction.atomic
def end_user_unlink(*, account: AbstractBaseUser, end_user_id: str) -> None:
    """Undo a link: the Dify identity plays as itself again from now on."""
    try:
        pk = uuid.UUID(str(end_user_id))
    except ValueError:
        raise NotFoundError("No linked Dify identity with that id.") from None
    unlinked = EndUser.objects.filter(pk=pk, linked_to__account=account).update(
        linked_to=None, linked_at=None
    )
    if not unlinked:
        raise NotFoundError("No linked Dify identity with that id.")
