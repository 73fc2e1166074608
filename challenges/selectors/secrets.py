"""Which secrets a creator can see (never their values)."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from challenges.models import Secret
from players.selectors import workspaces_for_user


def secrets_for_creator(*, user: AbstractBaseUser) -> QuerySet[Secret]:
    # Viewers do not see secrets at all, not even their names: only owners and editors.
    return (
        Secret.objects.filter(workspace__in=workspaces_for_user(user=user, writable=True))
        .order_by("name", "id")
        .defer("value")
    )
