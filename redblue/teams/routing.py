from django.urls import path

from redblue.teams.consumers import RedBlueLeaderboardConsumer

websocket_urlpatterns: list = [
    path(
        "ws/leaderboards/red-blue/<str:challenge_id>/",
        RedBlueLeaderboardConsumer.as_asgi(),
    ),
]
