from django.urls import path

from challenges import (
    views,
    views_agent_runs,
    views_collections,
    views_proofs,
    views_scoreboard,
    views_sessions,
    views_team_scoreboard,
)
from challenges.api.proofs import ProofKeysApi

urlpatterns = [
    path("", views.home, name="home"),
    path("challenges/<slug:slug>/", views.challenge_page, name="challenge-page"),
    path("challenges/<slug:slug>/play", views.challenge_play, name="challenge-play"),
    path("challenges/<slug:slug>/guess", views.challenge_guess, name="challenge-guess"),
    path(
        "challenges/<slug:slug>/hints/<str:hint_id>/unlock",
        views.challenge_hint_unlock,
        name="challenge-hint-unlock",
    ),
    path(
        "challenges/<slug:slug>/attempts/<str:attempt_id>/appeal",
        views.challenge_appeal,
        name="challenge-appeal",
    ),
    path(
        "challenges/<slug:slug>/sessions", views_sessions.session_new, name="challenge-session-new"
    ),
    path(
        "challenges/<slug:slug>/sessions/<str:session_id>/turns",
        views_sessions.session_turn,
        name="challenge-session-turn",
    ),
    path("sessions/<str:session_id>/", views_sessions.session_transcript, name="session-page"),
    path("challenges/<slug:slug>/runs", views_agent_runs.agent_run_new, name="challenge-agent-run"),
    path(
        "challenges/<slug:slug>/leaderboard",
        views.challenge_leaderboard,
        name="challenge-leaderboard-partial",
    ),
    path("collections/<slug:slug>/", views_collections.collection_page, name="collection-page"),
    path("scoreboard/", views_scoreboard.scoreboard_page, name="scoreboard"),
    path(
        "scoreboard/<slug:workspace_slug>/",
        views_scoreboard.scoreboard_page,
        name="scoreboard-workspace",
    ),
    path(
        "scoreboard/<slug:workspace_slug>/standings",
        views_scoreboard.scoreboard_partial,
        name="scoreboard-partial",
    ),
    path(
        "scoreboard/<slug:workspace_slug>/teams/",
        views_team_scoreboard.team_scoreboard_page,
        name="team-scoreboard",
    ),
    path("players/<str:end_user_id>/", views_scoreboard.player_page_view, name="player-page"),
    path("proofs/<str:proof_id>/", views_proofs.proof_page, name="proof-page"),
    path(".well-known/prompt-challenges/keys", ProofKeysApi.as_view(), name="proof-keys"),
    path("favicon.ico", views_scoreboard.favicon, name="favicon"),
]
