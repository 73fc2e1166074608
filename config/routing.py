from challenges.routing import websocket_urlpatterns as challenge_websockets

websocket_urlpatterns = [*challenge_websockets]
