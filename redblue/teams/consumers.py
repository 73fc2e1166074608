"""/ws/leaderboards/red-blue/<id>/: the standings on connect and every change after, with
the outcome (no prompts, no reply) of each pairing that changed."""

import logging

from channels.db import database_sync_to_async
from redis.exceptions import RedisError

from core.sockets import PushOnlyConsumer
from redblue.teams.live import red_blue_group
from redblue.teams.selectors import red_blue_challenge_visible_by_id, standings_for_challenge

logger = logging.getLogger(__name__)


@database_sync_to_async
def _visible_standings(challenge_id: str) -> dict | None:
    challenge = red_blue_challenge_visible_by_id(challenge_id=challenge_id)
    return standings_for_challenge(challenge=challenge) if challenge else None


class RedBlueLeaderboardConsumer(PushOnlyConsumer):
    close_code_internal_error = 1011

    async def connect(self):
        standings = await _visible_standings(self.scope["url_route"]["kwargs"]["challenge_id"])
        if standings is None:
            await self.close(code=4404)
            return
        group = red_blue_group(standings["red_blue_challenge_id"])
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except RedisError as error:
            logger.warning("Red/blue board socket refused: could not join %s: %r", group, error)
            await self.accept()
            await self.close(code=self.close_code_internal_error)
            return
        self.group = group
        await self.accept()
        await self.send_json({"type": "standings", "standings": standings, "pairings": []})

    async def disconnect(self, code):
        group = getattr(self, "group", None)
        if group:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except RedisError as error:
                logger.warning("Red/blue board socket could not leave %s: %r", group, error)

    async def red_blue_changed(self, event):
        await self.send_json(
            {"type": "standings", "standings": event["standings"], "pairings": event["pairings"]}
        )

    async def red_blue_opponent_requested(self, event):
        await self.send_json({"type": "opponent_requested", "team": event["team"]})
