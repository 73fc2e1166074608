from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import re_path

from challenges.routing import websocket_urlpatterns as challenge_websockets
from redblue.routing import websocket_urlpatterns as arena_websockets
from redblue.teams.routing import websocket_urlpatterns as red_blue_websockets


class UnknownPathConsumer(AsyncWebsocketConsumer):
    """Any websocket path no route matches is refused with close code 4404, as an unknown
    board is; without this route Channels' URLRouter raises ValueError (a server error)."""

    async def connect(self):
        await self.close(code=4404)


websocket_urlpatterns = [
    *challenge_websockets,
    *arena_websockets,
    *red_blue_websockets,
    re_path(r"", UnknownPathConsumer.as_asgi()),
]
