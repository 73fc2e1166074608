"""Which secrets a creator can see (never their values)."""

import uuid

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from challenges.models import Secret
from players.selectors import workspaces_for_user


def secrets_for_creator(
    *, user: AbstractBaseUser, workspace_id: uuid.UUID | None = None
) -> QuerySet[Secret]:
    # Viewers do not see secrets at all, not even their names: only owners and editors.
    secrets = Secret.objects.filter(workspace__in=workspaces_for_user(user=user, writable=True))
    if workspace_id:
        secrets = secrets.filter(workspace_id=workspace_id)
    return secrets.order_by("name", "id").defer("value")
