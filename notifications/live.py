"""Live pushes: a message to a channel-layer group, sent once the transaction commits."""

import logging
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)


def group_send(*, group: str, message: dict[str, Any]) -> None:
    """Send `message` to every socket in `group` now.

    A channel layer that is down must not undo or fail the write that caused the push,
    so the failure is logged once and the pages fall back to polling.
    """
    async_to_sync(group_send_async)(group=group, message=message)


async def group_send_async(*, group: str, message: dict[str, Any]) -> None:
    """`group_send` from a coroutine (the raw lanes)."""
    try:
        await get_channel_layer().group_send(group, message)
    except Exception:
        logger.warning("Could not push to the live group %s", group, exc_info=True)


def group_send_on_commit(*, group: str, message: Callable[[], dict[str, Any] | None]) -> None:
    """After the current transaction commits, build the message and send it to `group`.

    The message is built after the commit so it shows what was committed; a builder that
    returns None sends nothing.
    """

    def send() -> None:
        built = message()
        if built is not None:
            group_send(group=group, message=built)

    transaction.on_commit(send)
