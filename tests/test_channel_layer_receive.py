"""The Redis channel layer's receive ends when it is cancelled, whatever moment the cancel
lands at, and the layer still delivers afterwards.

A board socket's consumer cancels its receive when the socket closes and waits for it to
end; a receive that outlived its cancel kept uvicorn from ever finishing a shutdown."""

import asyncio

import pytest
from django.conf import settings

from config.channel_layer import WaitingRedisChannelLayer
from tests.conftest import redis_up, require_service

pytestmark = pytest.mark.services

# Enough event-loop steps to cover the receive's first round trips to Redis.
CANCEL_POINTS = 60
END_SECONDS = 5


@pytest.fixture
def layer():
    require_service("Redis", redis_up(), "set REDIS_URL")
    config = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    return WaitingRedisChannelLayer(**{**config, "prefix": "phc-test-receive"})


def test_it_ends_a_cancelled_receive_at_any_moment(layer):
    async def scenario() -> tuple[list[int], dict]:
        still_receiving = []
        for steps in range(CANCEL_POINTS):
            receiving = asyncio.ensure_future(layer.receive(await layer.new_channel()))
            for _ in range(steps):
                await asyncio.sleep(0)
            receiving.cancel()
            ended, _ = await asyncio.wait([receiving], timeout=END_SECONDS)
            if not ended:
                still_receiving.append(steps)
                while not receiving.done():  # stop it, so the next round starts clean
                    receiving.cancel()
                    await asyncio.wait([receiving], timeout=1)
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "board.changed"})
        delivered = await asyncio.wait_for(layer.receive(channel), END_SECONDS)
        await layer.close_pools()
        return still_receiving, delivered

    still_receiving, delivered = asyncio.run(scenario())
    assert still_receiving == []
    assert delivered == {"type": "board.changed"}
