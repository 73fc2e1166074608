from django.urls import path

from challenges.api import collections

urlpatterns = [
    path(
        "challenge-collections",
        collections.PublicCollectionListApi.as_view(),
        name="web-collections",
    ),
    path(
        "challenge-collections/<str:collection_id>",
        collections.PublicCollectionDetailApi.as_view(),
        name="web-collection",
    ),
    path(
        "challenge-collections/<str:collection_id>/leaderboard",
        collections.PublicCollectionLeaderboardApi.as_view(),
        name="web-collection-leaderboard",
    ),
]
