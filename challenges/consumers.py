"""Live leaderboards: /ws/leaderboards/challenge/<id>/ sends the standings on connect and
every time they change."""

import asyncio
import contextlib
import json
import logging
import random
import uuid

from channels.db import database_sync_to_async
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from challenges.board_cache import board_cache_fill, board_cached
from challenges.live import collection_group, collection_standings, leaderboard_group
from challenges.selectors.challenges import challenge_visible_by_id
from challenges.selectors.collections import collections_public
from challenges.selectors.standings import board_audiences, board_view
from core.sockets import PushOnlyConsumer

logger = logging.getLogger(__name__)


class ChallengeLeaderboardConsumer(PushOnlyConsumer):
    # A group change that cannot get a Redis connection (Redis restarting, or a burst that
    # outwaits the layer's pool) is retried with jittered backoff, about five seconds of
    # pauses in all; a read timeout is not retried, Redis is then too slow to wait for.
    redis_attempts = 8
    redis_first_delay = 0.05
    redis_max_delay = 1.0
    # RFC 6455 1011: the server met a condition that stopped it serving the socket.
    close_code_internal_error = 1011

    async def __call__(self, scope, receive, send):
        # A layer that cannot reach Redis (the wait for group messages fails) would
        # otherwise crash the app and drop the socket without a close frame, logging a
        # traceback per socket; close it properly so the page reconnects or polls.
        try:
            await super().__call__(scope, receive, send)
        except RedisError as error:
            logger.warning("Live board socket closed: the channel layer failed: %r", error)
            await self._leave_group()
            with contextlib.suppress(Exception):  # the client may already be gone
                await send({"type": "websocket.close", "code": self.close_code_internal_error})

    async def board(self) -> tuple[str, str] | None:
        """(the frame to send on connect, as JSON text; the group of later pushes), None for
        an unknown or inactive challenge, or boards this viewer may not see. A cached board
        (only public ones are) costs no database query."""
        challenge_id = self.scope["url_route"]["kwargs"]["challenge_id"]
        board = await board_cached(challenge_id)
        if board is None:
            board = await database_sync_to_async(_board_for_viewer)(
                challenge_id, self.scope.get("user")
            )
        if board is None:
            return None
        return board.frame.decode(), leaderboard_group(uuid.UUID(challenge_id))

    async def connect(self):
        board = await self.board()
        if board is None:
            await self.close(code=4404)
            return
        frame, group = board
        try:
            await self._with_redis_retries(self.channel_layer.group_add, group)
        except RedisError as error:
            logger.warning("Live board socket refused: could not join %s: %r", group, error)
            await self.accept()
            await self.close(code=self.close_code_internal_error)
            return
        self.group = group
        await self.accept()
        await self.send(text_data=frame)

    async def disconnect(self, code):
        await self._leave_group()

    async def leaderboard_changed(self, event):
        standings = event["standings"]
        if not await self._may_receive(standings.get("audience", "public")):
            # The creators made the boards players-only or hidden since this socket opened.
            await self._leave_group()
            await self.close(code=4404)
            return
        await self.send_json(standings)

    async def _may_receive(self, audience: str) -> bool:
        if audience == "public":
            return True
        if not hasattr(self, "workspace_access"):
            self.workspace_access = await database_sync_to_async(_workspace_access)(
                self.scope["url_route"]["kwargs"], self.scope.get("user")
            )
        return audience in self.workspace_access

    async def _leave_group(self) -> None:
        group, self.group = getattr(self, "group", None), None
        if not group:
            return
        try:
            await self._with_redis_retries(self.channel_layer.group_discard, group)
        except RedisError as error:
            # The member stays until the layer's group expiry drops it.
            logger.warning("Live board socket could not leave %s: %r", group, error)

    async def _with_redis_retries(self, group_change, group: str) -> None:
        delay = self.redis_first_delay
        for attempt in range(1, self.redis_attempts + 1):
            try:
                await group_change(group, self.channel_name)
                return
            except RedisConnectionError:
                if attempt == self.redis_attempts:
                    raise
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, self.redis_max_delay)


def _board_for_viewer(challenge_id: str, user):
    challenge = challenge_visible_by_id(challenge_id=challenge_id)
    if challenge is None or not board_view(workspace=challenge.workspace, viewer=user).shown:
        return None
    return board_cache_fill(challenge_id=challenge_id)


def _workspace_of(route: dict):
    if "challenge_id" in route:
        challenge = challenge_visible_by_id(challenge_id=route["challenge_id"])
        return challenge.workspace if challenge else None
    collection = collections_public().filter(id=route["collection_id"]).first()
    return collection.workspace if collection else None


def _workspace_access(route: dict, user) -> set[str]:
    """The board audiences (Workspace.board_visibility values) this socket's viewer is in."""
    workspace = _workspace_of(route)
    return board_audiences(workspace=workspace, viewer=user) if workspace else set()


@database_sync_to_async
def _collection_standings(collection_id: str, user) -> dict | None:
    try:
        collection = (
            collections_public()
            .select_related("workspace")
            .filter(id=uuid.UUID(collection_id))
            .first()
        )
    except ValueError:
        return None
    if collection is None or not board_view(workspace=collection.workspace, viewer=user).shown:
        return None
    return collection_standings(collection=collection)


class CollectionLeaderboardConsumer(ChallengeLeaderboardConsumer):
    """/ws/leaderboards/collection/<id>/: a public collection's standings on connect and
    after every change that alters them."""

    async def board(self) -> tuple[str, str] | None:
        standings = await _collection_standings(
            self.scope["url_route"]["kwargs"]["collection_id"], self.scope.get("user")
        )
        if standings is None:
            return None
        return json.dumps(standings), collection_group(standings["collection_id"])
