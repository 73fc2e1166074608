"""Creators' red/blue API under /console/api/."""

from django.urls import path

from redblue.teams import api_console

urlpatterns = [
    path(
        "red-blue-challenges",
        api_console.RedBlueChallengeListCreateApi.as_view(),
        name="console-red-blue-challenges",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>",
        api_console.RedBlueChallengeDetailApi.as_view(),
        name="console-red-blue-challenge",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/pairings",
        api_console.RedBlueChallengePairingListApi.as_view(),
        name="console-red-blue-challenge-pairings",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/regression-set",
        api_console.RedBlueRegressionSetApi.as_view(),
        name="console-red-blue-challenge-regression-set",
    ),
]
