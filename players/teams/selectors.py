"""Reads of teams. What a teammate sees of another member is their public name and when
they joined; attempts and per-player secrets stay with the player who made them."""

import uuid

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, QuerySet

from core.errors import ApplicationError, NotFoundError
from players.models import Team, TeamMember, Workspace
from players.selectors import rows_for_creator


def _with_members(teams: QuerySet[Team]) -> QuerySet[Team]:
    return teams.select_related("workspace").prefetch_related(
        Prefetch(
            "members",
            queryset=TeamMember.objects.select_related("end_user").order_by("joined_at", "id"),
        )
    )


def team_workspaces() -> QuerySet[Workspace]:
    """Workspaces where players form teams: teams on and a public challenge to play."""
    return (
        Workspace.objects.filter(team_size_limit__gt=0, challenges__is_active=True)
        .distinct()
        .order_by("name", "id")
    )


def workspace_for_teams(*, requested: str) -> Workspace:
    """The workspace named by id or slug; a 404 naming the field when there is none."""
    match = Workspace.objects.none()
    if requested:
        try:
            match = Workspace.objects.filter(id=uuid.UUID(requested))
        except ValueError:
            match = Workspace.objects.filter(slug=requested)
    workspace = match.first()
    if workspace is None:
        raise ApplicationError(
            "No workspace has that id or slug.",
            code="not_found",
            status=404,
            fields={"workspace": ["Unknown workspace."]},
        )
    return workspace


def teams_of_account(*, account: AbstractBaseUser) -> QuerySet[Team]:
    """The teams the account plays in, one per workspace at most, by workspace name."""
    return _with_members(
        Team.objects.filter(members__end_user__account=account).order_by("workspace__name", "id")
    )


def team_of_account(*, account: AbstractBaseUser, workspace: Workspace) -> Team | None:
    if not account.is_authenticated:
        return None
    return teams_of_account(account=account).filter(workspace=workspace).first()


def team_by_id(*, team_id) -> Team:
    """Any team, with its members (teams are public on the team scoreboard); 404 else."""
    try:
        pk = uuid.UUID(str(team_id))
    except ValueError:
        raise NotFoundError("No such team.") from None
    team = _with_members(Team.objects.filter(pk=pk)).first()
    if team is None:
        raise NotFoundError("No such team.")
    return team


def team_has_member(*, team: Team, account: AbstractBaseUser) -> bool:
    """Whether the account plays in the team (read from prefetched members)."""
    return account.is_authenticated and any(
        member.end_user.account_id == account.pk for member in team.members.all()
    )


def team_captain(team: Team) -> TeamMember | None:
    return next((member for member in team.members.all() if member.is_captain), None)


def teams_for_creator(*, user: AbstractBaseUser, workspace_id=None) -> QuerySet[Team]:
    """Teams of the workspaces the creator belongs to, newest first."""
    teams = rows_for_creator(Team.objects, user=user, workspace_id=workspace_id)
    return _with_members(teams.order_by("-created_at", "id"))


def teams_with_members(*, workspace: Workspace) -> QuerySet[Team]:
    """Every team of the workspace with its members, oldest first."""
    return _with_members(Team.objects.filter(workspace=workspace).order_by("created_at", "id"))
