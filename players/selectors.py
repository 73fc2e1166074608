from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from players.models import Membership, Workspace


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
