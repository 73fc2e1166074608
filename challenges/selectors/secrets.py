"""Which secrets a creator can see (never their values)."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from challenges.models import Secret
from players.selectors import workspaces_for_user


def secrets_for_creator(*, user: AbstractBaseUser) -> QuerySet[Secret]:
    return Secret.objects.filter(workspace__in=workspaces_for_user(user=user)).order_by(
        "name", "id"
    )
