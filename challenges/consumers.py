"""Live leaderboards: /ws/leaderboards/challenge/<id>/ sends the standings on connect and
every time they change."""

import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from challenges.live import leaderboard_group
from challenges.selectors.challenges import challenge_visible_by_id
from challenges.selectors.leaderboards import leaderboard_standings

logger = logging.getLogger(__name__)


@database_sync_to_async
def _visible_standings(challenge_id: str) -> dict | None:
    challenge = challenge_visible_by_id(challenge_id=challenge_id)
    return leaderboard_standings(challenge=challenge) if challenge else None


class ChallengeLeaderboardConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        challenge_id = self.scope["url_route"]["kwargs"]["challenge_id"]
        standings = await _visible_standings(challenge_id)
        if standings is None:
            await self.close(code=4404)
            return
        self.group = leaderboard_group(standings["challenge_id"])
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json(standings)

    async def disconnect(self, code):
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        # The socket is read-only; anything a client sends is ignored.
        return

    async def leaderboard_changed(self, event):
        await self.send_json(event["standings"])
