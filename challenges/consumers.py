"""Live leaderboards: /ws/leaderboards/challenge/<id>/ sends the standings on connect and
every time they change."""

import logging
import uuid

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings

from challenges import selectors
from challenges.models import Challenge

logger = logging.getLogger(__name__)


def leaderboard_group(challenge_id) -> str:
    return f"leaderboard.challenge.{challenge_id}"


def standings_for(*, challenge: Challenge) -> dict:
    rows = selectors.leaderboard_for_challenge(
        challenge=challenge, limit=settings.LEADERBOARD_DEFAULT_LIMIT
    )
    return {
        "type": "leaderboard",
        "challenge_id": str(challenge.id),
        "scoring_strategy": challenge.scoring_strategy,
        "entries": [
            {
                "rank": row.rank,
                "player": row.player,
                "end_user_id": row.end_user_id,
                "score": row.score,
                "judge_rating": row.judge_rating,
                "tokens_total": row.tokens_total,
                "elapsed_ms": row.elapsed_ms,
                "achieved_at": row.achieved_at.isoformat(),
            }
            for row in rows
        ],
    }


def leaderboard_broadcast(*, challenge_id) -> None:
    """Push the current standings to every open socket; call it after the commit.

    A channel layer that is down must not undo or fail an attempt already recorded, so
    the failure is logged and the pages fall back to polling.
    """
    challenge = Challenge.objects.filter(id=challenge_id).first()
    if challenge is None:
        return
    try:
        async_to_sync(get_channel_layer().group_send)(
            leaderboard_group(challenge_id),
            {"type": "leaderboard.changed", "standings": standings_for(challenge=challenge)},
        )
    except Exception:
        logger.warning("Could not push the leaderboard of %s", challenge_id, exc_info=True)


@database_sync_to_async
def _visible_standings(challenge_id: str) -> dict | None:
    try:
        challenge_uuid = uuid.UUID(challenge_id)
    except ValueError:
        return None
    challenge = Challenge.objects.filter(id=challenge_uuid, is_active=True).first()
    return standings_for(challenge=challenge) if challenge else None


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
