from challenges.routing import websocket_urlpatterns as challenge_websockets
from redblue.teams.routing import websocket_urlpatterns as red_blue_websockets

websocket_urlpatterns = [*challenge_websockets, *red_blue_websockets]
