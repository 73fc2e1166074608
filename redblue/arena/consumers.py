"""/ws/arena/<session>/: the live transcript of a session, redacted for the connected user.

A frame carries the new messages and the session's public state, so a page never has to
fetch anything after a push."""

from channels.db import database_sync_to_async

from core.sockets import PushOnlyConsumer
from redblue.arena import selectors
from redblue.arena.services import arena_group


@database_sync_to_async
def _snapshot(session_id: str, account, after: dict[str, int]) -> dict | None:
    session = selectors.arena_session(session_id=session_id)
    if session is None:
        return None
    viewer = selectors.site_viewer_invite(session=session, account=account)
    messages = selectors.transcript(session=session, viewer=viewer, after=after)
    return {
        "viewer": viewer,
        "messages": messages,
        "state": selectors.session_json(session)["state"],
    }


class ArenaSessionConsumer(PushOnlyConsumer):
    async def connect(self):
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        self.next_index: dict[str, int] = {}
        snapshot = await _snapshot(self.session_id, self.scope.get("user"), {})
        if snapshot is None:
            await self.close(code=4404)
            return
        self.group = arena_group(self.session_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self._push("transcript", snapshot)

    async def disconnect(self, code):
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def arena_changed(self, event):
        snapshot = await _snapshot(self.session_id, self.scope.get("user"), self.next_index)
        if snapshot is not None:
            await self._push("messages", snapshot)

    async def _push(self, kind: str, snapshot: dict) -> None:
        for message in snapshot["messages"]:
            channel = message["channel"]
            self.next_index[channel] = max(self.next_index.get(channel, 0), message["index"] + 1)
        await self.send_json({"type": kind, **snapshot})
