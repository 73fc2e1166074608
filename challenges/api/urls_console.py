from django.urls import include, path

from challenges.api import console

urlpatterns = [
    path("challenges", console.ChallengeListCreateApi.as_view(), name="console-challenges"),
    path(
        "challenges/<str:challenge_id>",
        console.ChallengeDetailApi.as_view(),
        name="console-challenge",
    ),
    path(
        "challenges/<str:challenge_id>/attempts",
        console.ChallengeAttemptListApi.as_view(),
        name="console-challenge-attempts",
    ),
    path("secrets", console.SecretListCreateApi.as_view(), name="console-secrets"),
    path("secrets/<str:secret_id>", console.SecretDetailApi.as_view(), name="console-secret"),
    path("", include("challenges.api.urls_collections_console")),
    path("", include("challenges.api.urls_bridge_keys_console")),
]
