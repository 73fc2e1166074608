from django.urls import path

from challenges.api.play import AttemptCreateApi

urlpatterns = [
    path(
        "challenges/<str:challenge_id>/attempts",
        AttemptCreateApi.as_view(),
        name="web-challenge-attempts",
    ),
]
