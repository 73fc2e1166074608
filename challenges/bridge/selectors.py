from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from challenges.models import BridgeKey
from players.selectors import workspaces_for_user


def bridge_keys_for_creator(*, user: AbstractBaseUser) -> QuerySet[BridgeKey]:
    return BridgeKey.objects.filter(workspace__in=workspaces_for_user(user=user)).order_by(
        "-created_at", "id"
    )
