from django.urls import path

from challenges.api import collections

urlpatterns = [
    path(
        "challenge-collections",
        collections.CollectionListCreateApi.as_view(),
        name="console-collections",
    ),
    path(
        "challenge-collections/<str:collection_id>",
        collections.CollectionDetailApi.as_view(),
        name="console-collection",
    ),
    path(
        "challenge-collections/<str:collection_id>/challenges",
        collections.CollectionChallengesApi.as_view(),
        name="console-collection-challenges",
    ),
]
