from django.urls import path

from challenges.consumers import ChallengeLeaderboardConsumer

websocket_urlpatterns: list = [
    path(
        "ws/leaderboards/challenge/<str:challenge_id>/",
        ChallengeLeaderboardConsumer.as_asgi(),
    ),
]
