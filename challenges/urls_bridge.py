"""The Dify bridge under /bridge/, signed with a bridge key."""

from django.urls import path

from challenges.bridge import api

urlpatterns = [
    path(
        "dify/challenge-evaluator",
        api.ChallengeEvaluatorApi.as_view(),
        name="bridge-dify-challenge-evaluator",
    ),
    path("dify/judging-llm", api.JudgingLlmApi.as_view(), name="bridge-dify-judging-llm"),
]
