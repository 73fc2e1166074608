"""The players' API under /web/api/."""

from django.urls import path

from challenges.api import (
    agent_runs,
    collections,
    hints,
    play,
    proofs,
    reviews,
    scoreboard,
    sessions,
    stream,
    team_scoreboard,
    web,
)

urlpatterns = [
    path(
        "scoreboard/<slug:workspace_slug>/teams",
        team_scoreboard.TeamScoreboardApi.as_view(),
        name="web-team-scoreboard",
    ),
    path("challenges", web.ChallengeListApi.as_view(), name="web-challenges"),
    path("challenges/<str:challenge_id>", web.ChallengeDetailApi.as_view(), name="web-challenge"),
    path(
        "challenges/<str:challenge_id>/leaderboard",
        web.ChallengeLeaderboardApi.as_view(),
        name="web-challenge-leaderboard",
    ),
    path(
        "challenges/<str:challenge_id>/attempts",
        play.AttemptCreateApi.as_view(),
        name="web-challenge-attempts",
    ),
    path(
        "challenges/<str:challenge_id>/guess",
        play.GuessCreateApi.as_view(),
        name="web-challenge-guess",
    ),
    path(
        "challenges/<str:challenge_id>/attempts/stream",
        stream.AttemptStreamApi.as_view(),
        name="web-challenge-attempts-stream",
    ),
    path(
        "challenges/<str:challenge_id>/hints",
        hints.ChallengeHintListApi.as_view(),
        name="web-challenge-hints",
    ),
    path("hints/<str:hint_id>/unlock", hints.HintUnlockApi.as_view(), name="web-hint-unlock"),
    path(
        "challenges/<str:challenge_id>/sessions",
        sessions.SessionCreateApi.as_view(),
        name="web-challenge-sessions",
    ),
    path("sessions/<str:session_id>", sessions.SessionDetailApi.as_view(), name="web-session"),
    path(
        "sessions/<str:session_id>/turns",
        sessions.TurnCreateApi.as_view(),
        name="web-session-turns",
    ),
    path(
        "sessions/<str:session_id>/turns/stream",
        sessions.TurnStreamApi.as_view(),
        name="web-session-turns-stream",
    ),
    path(
        "challenges/<str:challenge_id>/runs",
        agent_runs.AgentRunCreateApi.as_view(),
        name="web-challenge-runs",
    ),
    path("runs/<str:run_id>", agent_runs.AgentRunDetailApi.as_view(), name="web-run"),
    path(
        "scoreboard/<slug:workspace_slug>",
        scoreboard.ScoreboardApi.as_view(),
        name="web-scoreboard",
    ),
    path(
        "challenge-collections",
        collections.PublicCollectionListApi.as_view(),
        name="web-collections",
    ),
    path(
        "challenge-collections/<str:collection_id>",
        collections.PublicCollectionDetailApi.as_view(),
        name="web-collection",
    ),
    path(
        "challenge-collections/<str:collection_id>/leaderboard",
        collections.PublicCollectionLeaderboardApi.as_view(),
        name="web-collection-leaderboard",
    ),
    path(
        "attempts/<str:attempt_id>/appeal",
        reviews.AttemptAppealApi.as_view(),
        name="web-attempt-appeal",
    ),
    path("proofs/<str:proof_id>", proofs.ProofDetailApi.as_view(), name="web-proof"),
]
