"""Every write to teams. Races are settled by PostgreSQL: a join locks the team's row, so
joins for the last seat queue and the second finds the team full; a player joining two
teams at once is stopped by TeamMember's one-team-per-player constraint."""

import secrets

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from core.api import uuid_or_404
from core.errors import ApplicationError, NotFoundError
from core.ratelimit import parse_rate, rate_limit_hit
from players.link_codes import CODE_ALPHABET
from players.models import TEAM_SIZE_LIMIT_MAX, Team, TeamMember, Workspace
from players.services import end_user_for_account
from players.validators import validate_display_name

INVITE_CODE_LENGTH = 10
_NAME_MAX = Team._meta.get_field("name").max_length


def invite_code_normalised(code: str) -> str:
    """A code as typed ("abcde-fghjk ", "ABCDEFGHJK") in the stored form "ABCDE-FGHJK"."""
    raw = "".join(character for character in code.upper() if character.isalnum())
    return f"{raw[:5]}-{raw[5:]}" if len(raw) == INVITE_CODE_LENGTH else raw


def _new_invite_code() -> str:
    return invite_code_normalised(
        "".join(secrets.choice(CODE_ALPHABET) for _ in range(INVITE_CODE_LENGTH))
    )


def _teams_off(workspace: Workspace) -> ApplicationError:
    return ApplicationError(f"Teams are off in {workspace.name}.", code="teams_off", status=403)


def _already_in_team() -> ApplicationError:
    return ApplicationError(
        "You are already in a team in this workspace; leave it first.",
        code="already_in_team",
        status=409,
    )


def _clean_name(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        message = "Enter a team name."
    elif len(name) > _NAME_MAX:
        message = f"Use at most {_NAME_MAX} characters."
    else:
        try:
            validate_display_name(name)
        except ValidationError as error:
            message = " ".join(error.messages)
        else:
            return name
    raise ApplicationError(message, fields={"name": [message]})


def _locked_team(team_id) -> Team:
    team = (
        Team.objects.select_for_update()
        .select_related("workspace")
        .filter(pk=uuid_or_404(team_id))
        .first()
    )
    if team is None:
        raise NotFoundError("No such team.")
    return team


@transaction.atomic
def team_create(*, account: AbstractBaseUser, workspace: Workspace, name: str) -> Team:
    """A new team in `workspace` with the account's player as its captain."""
    if workspace.team_size_limit == 0:
        raise _teams_off(workspace)
    name = _clean_name(name)
    end_user = end_user_for_account(workspace=workspace, account=account)
    if TeamMember.objects.filter(end_user=end_user).exists():
        raise _already_in_team()
    try:
        with transaction.atomic():
            team = Team.objects.create(
                workspace=workspace, name=name, invite_code=_new_invite_code()
            )
    except IntegrityError:
        message = "A team of this workspace already has that name."
        raise ApplicationError(
            message, code="team_name_taken", status=409, fields={"name": [message]}
        ) from None
    try:
        with transaction.atomic():
            TeamMember.objects.create(team=team, end_user=end_user, is_captain=True)
    except IntegrityError:  # the player joined another team meanwhile
        raise _already_in_team() from None
    return team


def team_join(*, account: AbstractBaseUser, invite_code: str) -> Team:
    """Join the team whose code this is, while it has a free seat."""
    # Codes are tried one at a time by a person, never by the thousand.
    limit, window = parse_rate(settings.TEAM_JOIN_RATE_LIMIT)
    rate_limit_hit(scope="team-join", key=str(account.pk), limit=limit, window_seconds=window)
    code = invite_code_normalised(invite_code)
    with transaction.atomic():
        team = (
            Team.objects.select_for_update()
            .select_related("workspace")
            .filter(invite_code=code)
            .first()
            if code
            else None
        )
        if team is None:
            message = "No team has that invite code."
            raise ApplicationError(
                message, code="not_found", status=404, fields={"invite_code": [message]}
            )
        limit = team.workspace.team_size_limit
        if limit == 0:
            raise _teams_off(team.workspace)
        end_user = end_user_for_account(workspace=team.workspace, account=account)
        if TeamMember.objects.filter(end_user=end_user).exists():
            raise _already_in_team()
        # The team's row is locked: joins of this team wait here one after the other.
        if team.members.count() >= limit:
            raise ApplicationError(
                f"{team.name} is full ({limit} players).", code="team_full", status=409
            )
        try:
            with transaction.atomic():
                TeamMember.objects.create(team=team, end_user=end_user)
        except IntegrityError:  # the player joined or created another team meanwhile
            raise _already_in_team() from None
    return team


def _member_drop(*, team: Team, member: TeamMember) -> bool:
    """Remove `member` from the locked `team`; the captaincy passes to the member who
    joined first, and a team left empty is dissolved. True when it was dissolved."""
    member.delete()
    if not member.is_captain:
        return False
    successor = team.members.order_by("joined_at", "id").first()
    if successor is None:
        team.delete()
        return True
    successor.is_captain = True
    successor.save(update_fields=["is_captain"])
    return False


def _member_of(team: Team, account: AbstractBaseUser) -> TeamMember | None:
    return team.members.filter(end_user__account=account).first()


def _captain_check(team: Team, account: AbstractBaseUser) -> TeamMember:
    member = _member_of(team, account)
    if member is None or not member.is_captain:
        raise ApplicationError(
            "Only the team's captain can do this.", code="not_captain", status=403
        )
    return member


@transaction.atomic
def team_leave(*, account: AbstractBaseUser, team_id) -> bool:
    """The account's player leaves the team; True when that dissolved it."""
    team = _locked_team(team_id)
    member = _member_of(team, account)
    if member is None:
        raise ApplicationError("You are not in this team.", code="not_in_team", status=409)
    return _member_drop(team=team, member=member)


def _member_to_remove(team: Team, end_user_id) -> TeamMember:
    member = team.members.filter(end_user_id=uuid_or_404(end_user_id)).first()
    if member is None:
        raise NotFoundError("No such member of this team.")
    return member


@transaction.atomic
def team_member_remove_by_captain(*, account: AbstractBaseUser, team_id, end_user_id) -> None:
    team = _locked_team(team_id)
    captain = _captain_check(team, account)
    member = _member_to_remove(team, end_user_id)
    if member.pk == captain.pk:
        raise ApplicationError(
            "A captain leaves the team instead of removing themselves.", code="invalid"
        )
    _member_drop(team=team, member=member)


@transaction.atomic
def team_member_remove(*, team: Team, end_user_id) -> bool:
    """A creator removes a member (the captain too); True when that dissolved the team."""
    team = _locked_team(team.pk)
    return _member_drop(team=team, member=_member_to_remove(team, end_user_id))


@transaction.atomic
def team_invite_code_regenerate(*, account: AbstractBaseUser, team_id) -> Team:
    """A new code for the team; the old one stops working at once."""
    team = _locked_team(team_id)
    _captain_check(team, account)
    team.invite_code = _new_invite_code()
    team.save(update_fields=["invite_code"])
    return team


def team_size_limit_set(*, workspace: Workspace, team_size_limit: int) -> Workspace:
    """Teams already bigger keep their members; nobody joins them until they shrink."""
    if not 0 <= team_size_limit <= TEAM_SIZE_LIMIT_MAX:
        message = f"Use 0 (teams off) to {TEAM_SIZE_LIMIT_MAX}."
        raise ApplicationError(message, fields={"team_size_limit": [message]})
    workspace.team_size_limit = team_size_limit
    workspace.save(update_fields=["team_size_limit", "updated_at"])
    return workspace
