"""The creators' API under /console/api/."""

from django.urls import path

from challenges.api import (
    bounties,
    bridge_keys,
    budgets,
    collections,
    console,
    hints,
    reviews,
    scoreboard,
)

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
    path(
        "challenges/<str:challenge_id>/export",
        console.ChallengeBreakExportApi.as_view(),
        name="console-challenge-export",
    ),
    path(
        "challenges/<str:challenge_id>/hints",
        hints.ConsoleChallengeHintsApi.as_view(),
        name="console-challenge-hints",
    ),
    path("hints/<str:hint_id>", hints.ConsoleHintDetailApi.as_view(), name="console-hint"),
    path(
        "challenges/<str:challenge_id>/prerequisites",
        hints.ConsoleChallengePrerequisitesApi.as_view(),
        name="console-challenge-prerequisites",
    ),
    path(
        "challenges/<str:challenge_id>/leaderboard",
        scoreboard.ConsoleChallengeLeaderboardApi.as_view(),
        name="console-challenge-leaderboard",
    ),
    path("reviews", reviews.ReviewListApi.as_view(), name="console-reviews"),
    path("reviews/<str:review_id>", reviews.ReviewDecideApi.as_view(), name="console-review"),
    path(
        "attempts/<str:attempt_id>/reopen",
        reviews.AttemptReopenApi.as_view(),
        name="console-attempt-reopen",
    ),
    path("audit", reviews.AuditListApi.as_view(), name="console-audit"),
    path("scoreboard", scoreboard.ConsoleScoreboardApi.as_view(), name="console-scoreboard"),
    path("secrets", console.SecretListCreateApi.as_view(), name="console-secrets"),
    path("secrets/<str:secret_id>", console.SecretDetailApi.as_view(), name="console-secret"),
    path(
        "challenge-collections",
        collections.CollectionListCreateApi.as_view(),
        name="console-collections",
    ),
    path(
        "challenge-collections/<str:collection_id>",
        collections.CollectionDetailApi.as_view(),
        name="console-collection",
    ),
    path(
        "challenge-collections/<str:collection_id>/challenges",
        collections.CollectionChallengesApi.as_view(),
        name="console-collection-challenges",
    ),
    path("model-prices", budgets.ModelPriceListCreateApi.as_view(), name="console-model-prices"),
    path("spend", budgets.SpendApi.as_view(), name="console-spend"),
    path("bounties", bounties.BountyListCreateApi.as_view(), name="console-bounties"),
    path(
        "bounties/payouts.csv",
        bounties.BountyPayoutsCsvApi.as_view(),
        name="console-bounty-payouts",
    ),
    path("bounties/<str:bounty_id>", bounties.BountyDetailApi.as_view(), name="console-bounty"),
    path("waves", bounties.WaveListCreateApi.as_view(), name="console-waves"),
    path("waves/<str:wave_id>", bounties.WaveDetailApi.as_view(), name="console-wave"),
    path("bridge-keys", bridge_keys.BridgeKeyListCreateApi.as_view(), name="console-bridge-keys"),
    path(
        "bridge-keys/<str:key_id>",
        bridge_keys.BridgeKeyDetailApi.as_view(),
        name="console-bridge-key",
    ),
    path(
        "bridge-keys/<str:key_id>/revoke",
        bridge_keys.BridgeKeyRevokeApi.as_view(),
        name="console-bridge-key-revoke",
    ),
]
