"""Periodic arena work, scheduled by django-celery-beat (migration redblue 0002)."""

import logging

from celery import shared_task

from redblue.arena.services import arena_sessions_prune

logger = logging.getLogger(__name__)

PRUNE_TASK = "redblue.arena.tasks.arena_prune_stale_sessions"


@shared_task(name=PRUNE_TASK, acks_late=True)
def arena_prune_stale_sessions() -> int:
    pruned = arena_sessions_prune()
    if pruned:
        logger.info("Pruned %d open arena sessions nobody finished joining", pruned)
    return pruned
