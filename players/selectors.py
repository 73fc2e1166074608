import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from core.errors import ApplicationError, NotFoundError
from players.models import ApiToken, Bracket, EndUser, Membership, PlayerProfile, Workspace


def workspaces_for_user(*, user: AbstractBaseUser, writable: bool = False) -> QuerySet[Workspace]:
    if not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    memberships = Membership.objects.filter(user=user)
    if writable:
        memberships = memberships.exclude(role=Membership.Role.VIEWER)
    return Workspace.objects.filter(id__in=memberships.values("workspace_id"))


def rows_for_creator(
    rows: QuerySet, *, user: AbstractBaseUser, workspace_id: Any = None, app_id: str | None = None
) -> QuerySet:
    """What a creator sees of `rows` in the console: the rows of their workspaces, narrowed
    to one workspace (`?workspace=`) and one Dify app (`?app_id=`) when asked."""
    rows = rows.filter(workspace__in=workspaces_for_user(user=user))
    if workspace_id:
        rows = rows.filter(workspace_id=workspace_id)
    if app_id:
        rows = rows.filter(app_id=app_id)
    return rows


def membership_role(*, user: AbstractBaseUser, workspace_id) -> str | None:
    if user.is_superuser:
        return Membership.Role.OWNER
    return (
        Membership.objects.filter(user=user, workspace_id=workspace_id)
        .values_list("role", flat=True)
        .first()
    )


def workspace_require_write(*, user: AbstractBaseUser, workspace_id) -> None:
    """Refuse (403) a user whose role in the workspace is read-only or who has none."""
    if membership_role(user=user, workspace_id=workspace_id) not in ("owner", "editor"):
        raise ApplicationError(
            "Your role in this workspace is read-only.", code="permission_denied", status=403
        )


def workspace_for_write(*, user: AbstractBaseUser, requested: str | None) -> Workspace:
    """The workspace a creator's new row goes to: the one named (id or slug), else their only
    writable one."""
    writable = workspaces_for_user(user=user, writable=True)
    if requested:
        try:
            match = writable.filter(id=uuid.UUID(requested))
        except ValueError:
            match = writable.filter(slug=requested)
        workspace = match.first()
        if workspace is None:
            raise ApplicationError(
                "No workspace you can write to has that id or slug.",
                fields={"workspace": ["Unknown or read-only workspace."]},
            )
        return workspace
    workspaces = list(writable[:2])
    if len(workspaces) == 1:
        return workspaces[0]
    if not workspaces:
        raise ApplicationError(
            "You are not an owner or editor of any workspace.", code="permission_denied", status=403
        )
    raise ApplicationError(
        "You belong to several workspaces; say which with 'workspace'.",
        fields={"workspace": ["Required when you belong to several workspaces."]},
    )


def workspace_for_read(*, user: AbstractBaseUser, requested: str) -> Workspace:
    """The workspace a console list is filtered to (id or slug); 404 unless the caller is a
    member, so a filter is never silently ignored."""
    readable = workspaces_for_user(user=user)
    try:
        match = readable.filter(id=uuid.UUID(requested))
    except ValueError:
        match = readable.filter(slug=requested)
    workspace = match.first()
    if workspace is None:
        raise ApplicationError(
            "No workspace of yours has that id or slug.",
            code="not_found",
            status=404,
            fields={"workspace": ["Unknown workspace, or you are not a member of it."]},
        )
    return workspace


def workspace_of_member(*, user: AbstractBaseUser, requested: str | None) -> Workspace:
    """The workspace a console call acts on: the one named (id or slug; 404 unless the
    caller is a member), else the caller's only one."""
    if requested:
        return workspace_for_read(user=user, requested=requested)
    workspaces = list(workspaces_for_user(user=user)[:2])
    if not workspaces:
        raise NotFoundError("You are not a member of any workspace.")
    if len(workspaces) > 1:
        raise ApplicationError(
            "You belong to several workspaces; say which with '?workspace='.",
            fields={"workspace": ["Required when you belong to several workspaces."]},
        )
    return workspaces[0]


def end_user_of_account(*, workspace_id, account: AbstractBaseUser) -> EndUser | None:
    """The logged-in player's identity in a workspace, if they have played there."""
    if not account.is_authenticated:
        return None
    return EndUser.objects.filter(workspace_id=workspace_id, account=account).first()


def tokens_for_account(*, account: AbstractBaseUser) -> QuerySet[ApiToken]:
    """The account's API tokens that still work, newest first."""
    return ApiToken.objects.filter(user=account, expires_at__gt=timezone.now()).order_by(
        "-created_at", "-id"
    )


def profile_for_account(*, account: AbstractBaseUser) -> PlayerProfile:
    """The player's profile, or an unsaved one with the defaults when none was made yet."""
    profile = PlayerProfile.objects.filter(account=account).first()
    return profile or PlayerProfile(account=account)


def workspace_for_linking(*, requested: str) -> Workspace:
    """The workspace a link code is for (id or slug); may be left out when there is one."""
    workspaces = Workspace.objects.all()
    if requested:
        try:
            match = workspaces.filter(id=uuid.UUID(requested))
        except ValueError:
            match = workspaces.filter(slug=requested)
        workspace = match.first()
        if workspace is None:
            raise ApplicationError(
                "No workspace has that id or slug.", fields={"workspace": ["Unknown workspace."]}
            )
        return workspace
    only = list(workspaces[:2])
    if len(only) != 1:
        raise ApplicationError(
            "Say which workspace the Dify app plays in with 'workspace' (id or slug).",
            fields={"workspace": ["Required when the site has several workspaces."]},
        )
    return only[0]


def linked_identities_for_account(*, account: AbstractBaseUser) -> QuerySet[EndUser]:
    """The Dify identities linked to the account's players, newest link first."""
    return (
        EndUser.objects.filter(linked_to__account=account)
        .select_related("workspace")
        .order_by("-linked_at", "id")
    )


def brackets_of_workspace(*, workspace_id) -> list[Bracket]:
    """The workspace's brackets in their order (for pickers and board filters)."""
    return list(Bracket.objects.filter(workspace_id=workspace_id).order_by("position", "name"))


@dataclass(frozen=True)
class BracketPlace:
    workspace: Workspace
    brackets: list[Bracket]
    chosen: Bracket | None


def bracket_places_of_account(*, account: AbstractBaseUser) -> list[BracketPlace]:
    """For each workspace with brackets: its brackets and the one this player is in."""
    brackets = list(
        Bracket.objects.select_related("workspace").order_by("workspace__name", "position", "name")
    )
    chosen = dict(
        EndUser.objects.filter(account=account, bracket__isnull=False).values_list(
            "workspace_id", "bracket_id"
        )
    )
    places: dict = {}
    for bracket in brackets:
        places.setdefault(bracket.workspace_id, []).append(bracket)
    return [
        BracketPlace(
            workspace=group[0].workspace,
            brackets=group,
            chosen=next((b for b in group if b.id == chosen.get(workspace_id)), None),
        )
        for workspace_id, group in places.items()
    ]


def player_account_ids_of_workspace(*, workspace_id) -> list[int]:
    """The site accounts that have played in a workspace (its EndUsers with an account)."""
    return list(
        EndUser.objects.filter(workspace_id=workspace_id, account__isnull=False)
        .order_by("account_id")
        .values_list("account_id", flat=True)
        .distinct()
    )
