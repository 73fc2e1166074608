from django.urls import include, path

from challenges.api import web

urlpatterns = [
    path("challenges", web.ChallengeListApi.as_view(), name="web-challenges"),
    path("challenges/<str:challenge_id>", web.ChallengeDetailApi.as_view(), name="web-challenge"),
    path(
        "challenges/<str:challenge_id>/leaderboard",
        web.ChallengeLeaderboardApi.as_view(),
        name="web-challenge-leaderboard",
    ),
    path("", include("challenges.api.urls_play")),
    path("", include("challenges.api.urls_collections_web")),
]
