from django.urls import path

from challenges.api import web

urlpatterns = [
    path("challenges", web.ChallengeListApi.as_view(), name="web-challenges"),
    path("challenges/<str:challenge_id>", web.ChallengeDetailApi.as_view(), name="web-challenge"),
    path(
        "challenges/<str:challenge_id>/leaderboard",
        web.ChallengeLeaderboardApi.as_view(),
        name="web-challenge-leaderboard",
    ),
]
