"""The Dify team-challenge node under /bridge/."""

from django.urls import path

from redblue.teams import bridge

urlpatterns = [
    path(
        "dify/team-challenge", bridge.TeamChallengeApi.as_view(), name="bridge-dify-team-challenge"
    ),
]
