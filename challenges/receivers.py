"""What drops a cached board (challenges/board_cache.py) besides a change of its rows,
which refreshes it: its challenge saved or deleted (visibility, strategy, name), a player
on it renamed or removed, and its workspace's event settings
(freeze, visibility), which redraw and push every board. Each happens once the change
commits."""

from django.db.models.signals import post_delete, post_save, pre_delete
from django.dispatch import receiver

from challenges.board_cache import (
    board_cache_drop_for_end_users_on_commit,
    board_cache_drop_on_commit,
)
from challenges.live import workspace_boards_push_on_commit
from challenges.models import Challenge
from players.models import EndUser, Workspace
from players.signals import end_users_renamed

# Fields whose change alters a player's shown name (EndUser.public_name).
_NAME_FIELDS = {"display_name", "external_id"}


@receiver(post_save, sender=Challenge)
@receiver(post_delete, sender=Challenge)
def challenge_changed(sender, instance: Challenge, **kwargs) -> None:
    board_cache_drop_on_commit(challenge_id=instance.pk)


@receiver(end_users_renamed)
def end_users_renamed_drop_boards(sender, end_user_ids, **kwargs) -> None:
    board_cache_drop_for_end_users_on_commit(end_user_ids=end_user_ids)


@receiver(post_save, sender=EndUser)
def end_user_saved(sender, instance: EndUser, created: bool, update_fields=None, **kwargs) -> None:
    if created or (update_fields is not None and not _NAME_FIELDS & set(update_fields)):
        return
    board_cache_drop_for_end_users_on_commit(end_user_ids=[instance.pk])


@receiver(pre_delete, sender=EndUser)
def end_user_deleted(sender, instance: EndUser, **kwargs) -> None:
    # Before the delete: its board rows go with it.
    board_cache_drop_for_end_users_on_commit(end_user_ids=[instance.pk])


@receiver(post_save, sender=Workspace)
def workspace_saved(sender, instance: Workspace, created: bool, **kwargs) -> None:
    if not created:
        workspace_boards_push_on_commit(workspace_id=instance.pk)
