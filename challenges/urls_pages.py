from django.urls import path

from challenges import views, views_collections

urlpatterns = [
    path("", views.home, name="home"),
    path("challenges/<slug:slug>/", views.challenge_page, name="challenge-page"),
    path("challenges/<slug:slug>/play", views.challenge_play, name="challenge-play"),
    path(
        "challenges/<slug:slug>/leaderboard",
        views.challenge_leaderboard,
        name="challenge-leaderboard-partial",
    ),
    path("collections/<slug:slug>/", views_collections.collection_page, name="collection-page"),
]
