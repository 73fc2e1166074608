"""Arena (SpecArena protocol) rows, then the red/blue team challenges' rows."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from players.models import EndUser, Workspace


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

    class GameCategory(models.TextChoices):
        # benchmark: every player is a benchmark profile; test: all but one; train: else.
        TRAIN = "train"
        TEST = "test"
        BENCHMARK = "benchmark"

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
    # SpecArena's classification, set when the game ends from the players' profiles.
    game_category = models.CharField(
        max_length=9, choices=GameCategory.choices, default=GameCategory.TRAIN
    )
    # Next free message index per channel, advanced under the session's row lock; the
    # first message of a channel is number 1, as in SpecArena.
    operator_next_index = models.PositiveIntegerField(default=1)
    chat_next_index = models.PositiveIntegerField(default=1)

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

    # None on a channel that belongs to no session (SpecArena's chat takes any name).
    session = models.ForeignKey(
        ArenaSession, on_delete=models.CASCADE, related_name="messages", null=True, blank=True
    )
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
    is_benchmark = models.BooleanField(
        default=False, help_text="A reference model: games among them are benchmark games."
    )
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


# =========================================================================================
# Red/Blue team challenges (redblue/teams/): the seed's red_blue_challenges,
# team_submissions and team_pairings, plus who joined which side and the per-player
# standings kept by single-statement increments.
# =========================================================================================


class Team(models.TextChoices):
    RED = "red"
    BLUE = "blue"


class SelectionPolicy(models.TextChoices):
    LATEST_BEST = "latest_best"
    RANDOM_ACTIVE = "random_active"
    ROUND_ROBIN = "round_robin"
    REQUEST_NEW_IF_NONE = "request_new_if_none"


class RedBlueChallenge(models.Model):
    class Strategy(models.TextChoices):
        RED_BLUE_RATIO = "red_blue_ratio"
        CUSTOM = "custom"

    class Target(models.TextChoices):
        OFFLINE = "offline"
        OPENAI = "openai"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="red_blue_challenges"
    )
    app_id = models.CharField(max_length=64, blank=True, help_text="Dify app id.")
    workflow_id = models.CharField(max_length=64, blank=True, help_text="Dify workflow id.")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    judge_suite = models.JSONField(
        default=list,
        blank=True,
        help_text="Categories judged on every pairing: [{code, label, rubric}, …].",
    )
    defense_selection_policy = models.CharField(
        max_length=24, choices=SelectionPolicy.choices, default=SelectionPolicy.LATEST_BEST
    )
    attack_selection_policy = models.CharField(
        max_length=24, choices=SelectionPolicy.choices, default=SelectionPolicy.LATEST_BEST
    )
    scoring_strategy = models.CharField(
        max_length=20, choices=Strategy.choices, default=Strategy.RED_BLUE_RATIO
    )
    scoring_plugin_id = models.CharField(max_length=200, blank=True)
    scoring_entrypoint = models.CharField(max_length=300, blank=True)
    scoring_config = models.JSONField(default=dict, blank=True)
    theme = models.JSONField(default=dict, blank=True)
    instructions_md = models.TextField(blank=True)
    is_active = models.BooleanField(default=True)

    # The model every pairing runs (the defence as system prompt, the attack as the user
    # message) and the judge's settings (judging.judge_config; the rubric is per category).
    target = models.CharField(max_length=10, choices=Target.choices, default=Target.OFFLINE)
    target_model = models.CharField(max_length=200, blank=True)
    judge_config = models.JSONField(default=dict, blank=True)
    # SPEC §10: several judges per category, a rule, and when a person decides instead
    # (judging/judges.py); empty means the one judge of `judge_config`.
    judge_panel = models.JSONField(default=dict, blank=True)
    time_penalty_per_second = models.DecimalField(
        max_digits=8, decimal_places=3, default=0, help_text="Red loses this per reply second."
    )
    token_penalty_per_1k = models.DecimalField(
        max_digits=8,
        decimal_places=3,
        default=0,
        help_text="Each side loses this per 1,000 tokens of its own prompt.",
    )
    pair_cooldown_seconds = models.PositiveIntegerField(
        default=0, help_text="How long an attacker waits before hitting the same defence again."
    )
    banned_terms = models.JSONField(
        default=list, blank=True, help_text="Submissions containing any of these are refused."
    )
    sample_defense = models.TextField(
        blank=True, help_text="The defence Red players can test attacks against (never scored)."
    )
    max_submissions_per_hour = models.PositiveIntegerField(
        default=30, help_text="Per player; 0 means no limit."
    )
    # While it runs, an attacker never reads a defence (SPEC §4); once it has ended, the
    # creator may publish every attack, defence and reply.
    # An agent scenario (SPEC §9, the shape `challenges.agents.schema` checks): Blue writes
    # the agent's system prompt and defences, Red the slots' texts, and a pairing is won by
    # the scenario's win rule (docs/redblue.md, "Agent scenarios"). Null: a text challenge.
    agent = models.JSONField(null=True, blank=True)
    transcripts_published = models.BooleanField(
        default=False,
        help_text="Only once the challenge is closed: anyone may read every pairing's "
        "attack, defence and reply.",
    )

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(defense_selection_policy__in=SelectionPolicy.values)
                & Q(attack_selection_policy__in=SelectionPolicy.values),
                name="red_blue_policy_valid",
            ),
            models.CheckConstraint(
                condition=Q(scoring_strategy__in=["red_blue_ratio", "custom"]),
                name="red_blue_strategy_valid",
            ),
            models.CheckConstraint(
                condition=Q(time_penalty_per_second__gte=0) & Q(token_penalty_per_1k__gte=0),
                name="red_blue_penalties_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("red-blue-page", args=[str(self.id)])


class TeamMembership(models.Model):
    """The side a player joined; one side per player and challenge."""

    red_blue_challenge = models.ForeignKey(
        RedBlueChallenge, on_delete=models.CASCADE, related_name="memberships"
    )
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    team = models.CharField(max_length=4, choices=Team.choices)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["red_blue_challenge", "end_user"], name="team_membership_one_side"
            ),
            models.CheckConstraint(
                condition=Q(team__in=["red", "blue"]), name="team_membership_team_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.end_user} on {self.team}"


class TeamSubmission(models.Model):
    class Status(models.TextChoices):
        PAIRED = "paired"  # has (or had) an opponent; see its pairings
        WAITING = "waiting"  # no submission of the other side existed yet
        # A defence being run against the challenge's regression set: it counts (is
        # paired, becomes the player's current one) only once no attack of it breaks it.
        CHECKING = "checking"
        REJECTED = "rejected"  # an attack of the regression set still breaks it

    class Source(models.TextChoices):
        WEB = "web"
        API = "api"
        BRIDGE = "bridge"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    red_blue_challenge = models.ForeignKey(
        RedBlueChallenge, on_delete=models.CASCADE, related_name="submissions"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    end_user = models.ForeignKey(
        EndUser, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    team = models.CharField(max_length=4, choices=Team.choices)
    prompt = models.TextField()
    active = models.BooleanField(default=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PAIRED)
    source = models.CharField(max_length=6, choices=Source.choices, default=Source.WEB)
    workflow_run_id = models.CharField(max_length=100, blank=True)
    # Kept by single-statement increments when a pairing completes (policy latest_best).
    points_total = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    pairings_count = models.PositiveIntegerField(default=0)
    last_paired_at = models.DateTimeField(null=True, blank=True)
    # A defence's run against the regression set (docs/redblue.md, "Regression set"):
    # {checked, passed, failures: [{attack_submission_id, categories, judge_rating,
    # response}]}; null when the set was empty (or for an attack).
    regression_report = models.JSONField(null=True, blank=True)
    # Agent scenarios: Blue's defence layers (`prompt` holds its system prompt) and Red's
    # slot texts (`prompt` holds them rendered as text, for banned terms and token counts).
    defences = models.JSONField(default=list, blank=True)
    slots = models.JSONField(null=True, blank=True)
    # A defence's run of the scenario's benign tasks, once per defence: {passed, total,
    # tasks: [{task, passed}]}; its ratio scales Blue's points (docs/redblue.md).
    benign_report = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(
                fields=["red_blue_challenge", "team", "active", "created_at"],
                name="team_submission_pool",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(team__in=["red", "blue"]), name="team_submission_team_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["paired", "waiting", "checking", "rejected"]),
                name="team_submission_status_valid",
            ),
            models.UniqueConstraint(
                fields=["workspace", "workflow_run_id"],
                condition=~Q(workflow_run_id=""),
                name="team_submission_unique_run",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.team} submission {self.id}"


class TeamPairing(models.Model):
    """Which attack was tested against which defence, with the per-category verdicts."""

    class Status(models.TextChoices):
        PENDING = "pending"
        COMPLETED = "completed"
        FAILED = "failed"  # the target model never answered; nobody scores
        # A judge panel disagreed on a category: scored once a person decides (SPEC §10).
        REVIEW = "review"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    red_blue_challenge = models.ForeignKey(
        RedBlueChallenge, on_delete=models.CASCADE, related_name="pairings"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    attack_submission = models.ForeignKey(
        TeamSubmission, on_delete=models.CASCADE, null=True, related_name="attack_pairings"
    )
    defense_submission = models.ForeignKey(
        TeamSubmission, on_delete=models.CASCADE, null=True, related_name="defense_pairings"
    )
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.PENDING)
    # The side whose new submission made this pairing (an attacker's cooldown counts only
    # the defences they went for, not a defender testing a new defence on their attack).
    triggered_by = models.CharField(max_length=4, choices=Team.choices, default=Team.RED)
    response = models.TextField(blank=True, help_text="The target's reply; shown to both players.")
    judge_output_raw = models.JSONField(null=True, blank=True)
    categories = models.JSONField(null=True, blank=True, help_text="{category: breached}")
    judge_rating = models.IntegerField(null=True, blank=True)
    judge_feedback = models.TextField(blank=True)
    red_points = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    blue_points = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    tokens_total = models.IntegerField(null=True, blank=True)
    elapsed_ms = models.IntegerField(null=True, blank=True)
    # An agent scenario's run: {steps, final_answer, stop_reason, why} (null otherwise).
    trace = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Each attack meets each defence at most once, so nothing is counted twice.
            models.UniqueConstraint(
                fields=["attack_submission", "defense_submission"], name="team_pairing_once"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "completed", "failed", "review"]),
                name="team_pairing_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(red_points__gte=0) & Q(blue_points__gte=0),
                name="team_pairing_points_not_negative",
            ),
        ]
        indexes = [
            models.Index(fields=["red_blue_challenge", "-created_at"], name="team_pairing_recent"),
        ]

    def __str__(self) -> str:
        return f"pairing {self.id} ({self.status})"


class TeamStanding(models.Model):
    """A player's points on their side; changed only by single-statement increments."""

    red_blue_challenge = models.ForeignKey(
        RedBlueChallenge, on_delete=models.CASCADE, related_name="standings"
    )
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    team = models.CharField(max_length=4, choices=Team.choices)
    points = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    pairings = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["red_blue_challenge", "end_user", "team"], name="team_standing_unique"
            ),
            models.CheckConstraint(
                condition=Q(points__gte=0), name="team_standing_points_not_negative"
            ),
        ]
        indexes = [
            models.Index(
                fields=["red_blue_challenge", "team", "-points"], name="team_standing_board"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.end_user} {self.team}: {self.points}"


class RegressionAttack(models.Model):
    """An attack that broke a defence of the challenge (a completed pairing with a breached
    category): it joins the challenge's regression set once, and every defence submitted
    later must withstand it before it counts (SPEC §10 Exports)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    red_blue_challenge = models.ForeignKey(
        RedBlueChallenge, on_delete=models.CASCADE, related_name="regression_attacks"
    )
    attack_submission = models.ForeignKey(
        TeamSubmission, on_delete=models.CASCADE, related_name="+"
    )
    # The break that put it there (the first one, when the attack broke several defences).
    pairing = models.ForeignKey(TeamPairing, on_delete=models.CASCADE, related_name="+")
    categories = models.JSONField(default=list, help_text="The categories it breached.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["red_blue_challenge", "attack_submission"], name="regression_attack_once"
            ),
        ]

    def __str__(self) -> str:
        return f"regression attack {self.attack_submission_id}"
