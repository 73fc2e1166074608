import uuid

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from challenges.models import BridgeKey
from players.selectors import workspaces_for_user


def bridge_keys_for_creator(
    *, user: AbstractBaseUser, workspace_id: uuid.UUID | None = None
) -> QuerySet[BridgeKey]:
    keys = BridgeKey.objects.filter(workspace__in=workspaces_for_user(user=user))
    if workspace_id:
        keys = keys.filter(workspace_id=workspace_id)
    return keys.order_by("-created_at", "id")
