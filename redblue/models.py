"""Arena (SpecArena protocol) rows. Red/blue team models will sit beside these."""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class ArenaChallengeType(models.Model):
    """A challenge type found through an entry point; the row holds what an admin edits."""

    name = models.SlugField(max_length=64, unique=True)
    metadata = models.JSONField(
        default=dict, blank=True, help_text="Overrides merged onto the type's ChallengeMetadata."
    )
    options = models.JSONField(
        default=dict, blank=True, help_text="Options handed to the type at session creation."
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ArenaSession(models.Model):
    """The seed's `Challenge`: one game of one type, with its operator state."""

    class Status(models.TextChoices):
        OPEN = "open"
        ACTIVE = "active"
        ENDED = "ended"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    challenge_type = models.ForeignKey(
        ArenaChallengeType, on_delete=models.PROTECT, to_field="name", related_name="sessions"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    invites = models.JSONField(default=list)
    players = models.JSONField(default=list, help_text="Invite codes in join order.")
    player_identities = models.JSONField(default=dict)
    scores = models.JSONField(default=list)
    attributions = models.JSONField(default=list)
    game_state = models.JSONField(default=dict)
    # Next free message index per channel, advanced under the session's row lock.
    operator_next_index = models.PositiveIntegerField(default=0)
    chat_next_index = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"{self.challenge_type_id} {self.id}"

    @property
    def operator_channel(self) -> str:
        return f"challenge_{self.id}"

    @property
    def chat_channel(self) -> str:
        return str(self.id)


class ArenaInvite(models.Model):
    """One single-use invite of a session; claimed once, by one player."""

    code = models.CharField(max_length=64, primary_key=True)
    session = models.ForeignKey(ArenaSession, on_delete=models.CASCADE, related_name="invite_rows")
    position = models.PositiveSmallIntegerField()
    player_index = models.PositiveSmallIntegerField(null=True, blank=True)
    user_id = models.CharField(max_length=128, blank=True, db_index=True)
    joined_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "player_index"], name="arena_invite_one_player_per_index"
            ),
        ]

    def __str__(self) -> str:
        return self.code


class ArenaMessage(models.Model):
    """The seed's `ChatMessage`, on the operator channel or the players' chat channel."""

    session = models.ForeignKey(ArenaSession, on_delete=models.CASCADE, related_name="messages")
    channel = models.CharField(max_length=80)
    index = models.PositiveIntegerField()
    sender = models.CharField(max_length=128)
    recipient = models.CharField(max_length=128, blank=True)
    content = models.TextField(blank=True)
    message_type = models.CharField(max_length=64, blank=True)
    timestamp_ms = models.BigIntegerField()

    class Meta:
        ordering = ["channel", "index"]
        constraints = [
            models.UniqueConstraint(fields=["channel", "index"], name="arena_message_one_index"),
        ]

    def __str__(self) -> str:
        return f"{self.channel}#{self.index}"


class ArenaUser(models.Model):
    """The seed's `UserProfile`: a persistent player identity (hash of a public key)."""

    user_id = models.CharField(max_length=128, unique=True)
    username = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=100, blank=True)
    account = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="arena_user",
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["user_id"]

    def __str__(self) -> str:
        return self.username or self.user_id


class ScoringEntry(models.Model):
    """One strategy's standing of one player, per challenge type ('' = the global board)."""

    GLOBAL = ""

    challenge_type = models.CharField(max_length=64, blank=True)
    strategy = models.CharField(max_length=64)
    player_id = models.CharField(max_length=128)
    games_played = models.PositiveIntegerField(default=0)
    metrics = models.JSONField(default=dict)
    # The strategy's private running totals, so each game updates in O(1).
    state = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["challenge_type", "strategy", "player_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["challenge_type", "strategy", "player_id"], name="arena_one_scoring_entry"
            ),
        ]
        indexes = [models.Index(fields=["player_id"])]
        verbose_name_plural = "scoring entries"

    def __str__(self) -> str:
        return f"{self.challenge_type or 'global'}/{self.strategy}/{self.player_id}"
