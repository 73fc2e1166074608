from django.urls import path

from challenges.consumers import ChallengeLeaderboardConsumer, CollectionLeaderboardConsumer

websocket_urlpatterns: list = [
    path(
        "ws/leaderboards/challenge/<str:challenge_id>/",
        ChallengeLeaderboardConsumer.as_asgi(),
    ),
    path(
        "ws/leaderboards/collection/<str:collection_id>/",
        CollectionLeaderboardConsumer.as_asgi(),
    ),
]
