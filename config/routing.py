from challenges.routing import websocket_urlpatterns as challenge_websockets

websocket_urlpatterns = [*challenge_websockets]

from redblue.routing import websocket_urlpatterns as arena_websockets  # noqa: E402

websocket_urlpatterns += arena_websockets
