"""Players' red/blue API under /web/api/."""

from django.urls import path

from redblue.teams import api_web

urlpatterns = [
    path(
        "red-blue-challenges", api_web.RedBlueChallengeListApi.as_view(), name="web-red-blue-list"
    ),
    path(
        "red-blue-challenges/<str:challenge_id>",
        api_web.RedBlueChallengeDetailApi.as_view(),
        name="web-red-blue-challenge",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/join",
        api_web.RedBlueJoinApi.as_view(),
        name="web-red-blue-join",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/submit",
        api_web.RedBlueSubmitApi.as_view(),
        name="web-red-blue-submit",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/submissions/<str:submission_id>",
        api_web.RedBlueSubmissionApi.as_view(),
        name="web-red-blue-submission",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/leaderboard",
        api_web.RedBlueLeaderboardApi.as_view(),
        name="web-red-blue-leaderboard",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/pairings",
        api_web.RedBluePlayerPairingsApi.as_view(),
        name="web-red-blue-my-pairings",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/transcripts",
        api_web.RedBlueTranscriptsApi.as_view(),
        name="web-red-blue-transcripts",
    ),
    path(
        "red-blue-challenges/<str:challenge_id>/self-test",
        api_web.RedBlueSelfTestApi.as_view(),
        name="web-red-blue-self-test",
    ),
]
