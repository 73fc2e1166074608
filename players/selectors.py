from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from players.models import Membership, PlayerProfile, Workspace


def workspaces_for_user(*, user: AbstractBaseUser, writable: bool = False) -> QuerySet[Workspace]:
    if not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    memberships = Membership.objects.filter(user=user)
    if writable:
        memberships = memberships.exclude(role=Membership.Role.VIEWER)
    return Workspace.objects.filter(id__in=memberships.values("workspace_id"))


def membership_role(*, user: AbstractBaseUser, workspace_id) -> str | None:
    if user.is_superuser:
        return Membership.Role.OWNER
    return (
        Membership.objects.filter(user=user, workspace_id=workspace_id)
        .values_list("role", flat=True)
        .first()
    )


def profile_for_account(*, account: AbstractBaseUser) -> PlayerProfile:
    """The player's profile, or an unsaved one with the defaults when none was made yet."""
    profile = PlayerProfile.objects.filter(account=account).first()
    return profile or PlayerProfile(account=account)
