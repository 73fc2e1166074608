from django.urls import path

from redblue.arena.consumers import ArenaSessionConsumer

websocket_urlpatterns: list = [
    path("ws/arena/<uuid:session_id>/", ArenaSessionConsumer.as_asgi()),
]
