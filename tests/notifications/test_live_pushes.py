"""notifications.live: a push leaves only after the commit, and a broken channel layer
never undoes or fails the write that caused it."""

import asyncio
import logging

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction
from django.test import override_settings

from challenges.board_refresh import board_refreshes_wait
from challenges.models import ChallengeAttempt
from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from notifications.live import group_send_on_commit
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db(transaction=True)


class UnreachableChannelLayer(InMemoryChannelLayer):
    """Stands in for a Redis channel layer that is down."""

    async def group_send(self, group, message):
        raise ConnectionError("channel layer unreachable")


def listener(group: str) -> str:
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group, channel)
    return channel


def received(channel: str) -> dict:
    async def first() -> dict:
        return await asyncio.wait_for(get_channel_layer().receive(channel), timeout=5)

    return async_to_sync(first)()


def test_it_sends_only_once_the_transaction_commits():
    channel = listener("board.test")
    built = []

    def message() -> dict:
        built.append(True)
        return {"type": "board.changed", "value": 1}

    with transaction.atomic():
        group_send_on_commit(group="board.test", message=message)
        assert built == []
    assert received(channel) == {"type": "board.changed", "value": 1}


def test_it_sends_nothing_when_the_transaction_rolls_back():
    built = []
    with pytest.raises(RuntimeError), transaction.atomic():
        group_send_on_commit(group="board.test", message=lambda: built.append(True) or {})
        raise RuntimeError("rolled back")
    assert built == []


def test_it_sends_nothing_when_the_builder_has_nothing(caplog):
    channel = listener("board.test")
    with caplog.at_level(logging.DEBUG, logger="notifications.live"):
        group_send_on_commit(group="board.test", message=lambda: None)
        group_send_on_commit(group="board.test", message=lambda: {"type": "board.changed"})
    assert received(channel) == {"type": "board.changed"}
    assert [r for r in caplog.records if r.name == "notifications.live"] == []


@override_settings(
    CHANNEL_LAYERS={
        "default": {"BACKEND": "tests.notifications.test_live_pushes.UnreachableChannelLayer"}
    }
)
def test_it_keeps_a_winning_attempt_and_logs_once_when_the_layer_is_down(workspace, caplog):
    challenge = make_challenge(workspace=workspace)
    with caplog.at_level(logging.WARNING, logger="notifications.live"):
        attempt = attempt_record(
            challenge=challenge,
            end_user=make_end_user(workspace=workspace),
            verdict=Verdict(True, "ok"),
        )
        # The board is drawn and pushed by the coalesced refresh (challenges/board_refresh.py).
        assert board_refreshes_wait()
    assert ChallengeAttempt.objects.filter(id=attempt.id, succeeded=True).exists()
    warnings = [r for r in caplog.records if r.name == "notifications.live"]
    assert [r.getMessage() for r in warnings] == [
        f"Could not push to the live group leaderboard.challenge.{challenge.id}"
    ]
