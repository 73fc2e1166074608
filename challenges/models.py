import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.encryption import EncryptedTextField
from players.models import EndUser, Workspace

# The longest prompt a player sends a target model: web play, the creator's try-it and a
# red/blue submission alike.
PROMPT_MAX_CHARS = 4000


class Secret(models.Model):
    """A server-side value a challenge refers to by name; it never leaves the server."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="secrets")
    name = models.CharField(max_length=100)
    value = EncryptedTextField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="secret_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<Secret {self.name}>"


class ChallengeQuerySet(models.QuerySet):
    def active(self, now=None) -> "ChallengeQuerySet":
        now = now or timezone.now()
        # The same window as Challenge.is_open: the challenge's own and its workspace's.
        # A challenge in waves plays while one of them is open.
        membership = Wave.challenges.through.objects.filter(challenge_id=models.OuterRef("pk"))
        return self.filter(is_active=True).filter(
            Q(starts_at__isnull=True) | Q(starts_at__lte=now),
            Q(ends_at__isnull=True) | Q(ends_at__gt=now),
            Q(workspace__starts_at__isnull=True) | Q(workspace__starts_at__lte=now),
            Q(workspace__ends_at__isnull=True) | Q(workspace__ends_at__gt=now),
            ~models.Exists(membership)
            | models.Exists(membership.filter(wave__opens_at__lte=now, wave__closes_at__gt=now)),
        )


class Challenge(models.Model):
    class SuccessType(models.TextChoices):
        CONTAINS = "contains"
        REGEX = "regex"
        CUSTOM = "custom"

    class Strategy(models.TextChoices):
        FIRST = "first"
        FASTEST = "fastest"
        FEWEST_TOKENS = "fewest_tokens"
        HIGHEST_RATING = "highest_rating"
        CUSTOM = "custom"

    class Target(models.TextChoices):
        OFFLINE = "offline"
        OPENAI = "openai"
        DIFY = "dify"

    class EvaluatorType(models.TextChoices):
        RULES = "rules"
        LLM_JUDGE = "llm-judge"
        CUSTOM = "custom"

    class AnswerMode(models.TextChoices):
        OUTPUT = "output"
        GUESS = "guess"

    class Mode(models.TextChoices):
        SINGLE = "single", "Single prompt"
        CONVERSATION = "conversation", "Conversation"
        AGENT = "agent", "Agent with tools"

    class JudgeScope(models.TextChoices):
        TURN = "turn", "The turn's reply"
        TRANSCRIPT = "transcript", "The whole session"

    class TargetAssignment(models.TextChoices):
        ROUND_ROBIN = "round_robin"
        CHOICE = "choice"

    class CopyPolicy(models.TextChoices):
        OFF = "off"
        FLAG = "flag", "flag near-copies"
        REFUSE = "refuse", "refuse near-copies"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="challenges")
    app_id = models.CharField(max_length=64, blank=True, help_text="Dify app id.")
    workflow_id = models.CharField(max_length=64, blank=True, help_text="Dify workflow id.")

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    goal = models.TextField(blank=True, help_text="Plain text shown to players.")
    instructions_md = models.TextField(blank=True, help_text="Markdown shown on the page.")
    theme = models.JSONField(default=dict, blank=True)

    success_type = models.CharField(
        max_length=10, choices=SuccessType.choices, default=SuccessType.CONTAINS
    )
    success_pattern = models.TextField(
        blank=True, help_text="Text or RE2 regex; {{secret}} is filled in server-side."
    )
    secret_ref = models.CharField(max_length=100, blank=True, help_text="Name of a Secret.")
    answer_mode = models.CharField(
        max_length=10,
        choices=AnswerMode.choices,
        default=AnswerMode.OUTPUT,
        help_text="output: the reply is judged. guess: the player types the secret they "
        "worked out into an answer box.",
    )
    secret_per_player = models.BooleanField(
        default=False, help_text="Each player gets their own secret, derived server-side."
    )
    secret_words = models.TextField(
        blank=True,
        help_text="With per-player secrets: words to draw from, one a line (a suffix keeps "
        "them apart); empty means a random token.",
    )
    defences = models.JSONField(
        default=list, blank=True, help_text="Ordered defence layers (SPEC §4c)."
    )
    scoring_strategy = models.CharField(
        max_length=20, choices=Strategy.choices, default=Strategy.FIRST
    )
    is_active = models.BooleanField(default=True)

    system_prompt = models.TextField(blank=True, help_text="The defence the target model runs.")
    target = models.CharField(max_length=10, choices=Target.choices, default=Target.OFFLINE)
    target_model = models.CharField(max_length=200, blank=True)
    target_config = models.JSONField(default=dict, blank=True)
    # Several anonymised targets (SPEC §9, challenges/targets.py): a list of
    # {codename, target, target_model, target_config}; empty: the target above is the only one.
    targets = models.JSONField(default=list, blank=True)
    target_assignment = models.CharField(
        max_length=12,
        choices=TargetAssignment.choices,
        default=TargetAssignment.ROUND_ROBIN,
        db_default=TargetAssignment.ROUND_ROBIN,
        help_text="Several targets: round_robin gives each player the next one in turn; "
        "choice lets the player pick a codename.",
    )
    reveal_targets = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Several targets: show players which model stands behind each codename.",
    )

    evaluator_type = models.CharField(
        max_length=10, choices=EvaluatorType.choices, default=EvaluatorType.RULES
    )
    judge_config = models.JSONField(default=dict, blank=True)
    # SPEC §10: {judges: [judge_config…], rule, review, review_margin}; empty: one judge.
    judge_panel = models.JSONField(default=dict, blank=True)
    evaluator_plugin_id = models.CharField(max_length=200, blank=True)
    evaluator_entrypoint = models.CharField(max_length=300, blank=True)
    evaluator_config = models.JSONField(default=dict, blank=True)
    scoring_plugin_id = models.CharField(max_length=200, blank=True)
    scoring_entrypoint = models.CharField(max_length=300, blank=True)
    scoring_config = models.JSONField(default=dict, blank=True)

    max_attempts_per_hour = models.PositiveIntegerField(
        default=60, help_text="Per player; 0 means no limit."
    )
    starts_at = models.DateTimeField(null=True, blank=True)
    ends_at = models.DateTimeField(null=True, blank=True)
    mask_variables = models.JSONField(default=list, blank=True)
    # Failed attempts keep only a hash and length unless the creator asks for the text
    # (masked) for research; the player then also sees it in their own history.
    keep_failed_prompts = models.BooleanField(
        default=False,
        help_text="Keep failed attempts' prompts and replies (masked) for research and exports.",
    )
    # SPEC §10 Copies: a winning prompt this close to another player's earlier win.
    copy_policy = models.CharField(
        max_length=10,
        choices=CopyPolicy.choices,
        default=CopyPolicy.OFF,
        db_default=CopyPolicy.OFF,
        help_text="What to do with a win whose prompt is a near-copy of another player's "
        "earlier winning prompt: nothing, record it flagged, or refuse it.",
    )
    copy_threshold = models.FloatField(
        default=0.8,
        db_default=0.8,
        help_text="Trigram similarity (above 0, up to 1) from which a prompt is a near-copy; "
        "0.8 catches lightly reworded copies; 1 only prompts made of the same words.",
    )

    # The kind of play (SPEC §9); challenges/modes/ holds one module per kind.
    mode = models.CharField(
        max_length=20,
        choices=Mode.choices,
        default=Mode.SINGLE,
        db_default=Mode.SINGLE,
        help_text="single: one prompt, one reply. conversation: a session of turns in which "
        "the model sees the whole history. agent: the model calls tools and reads content "
        "the player wrote (indirect prompt injection).",
    )
    # Agent: the scenario (SPEC §9), validated by challenges/agents/schema.py; {} otherwise.
    agent = models.JSONField(default=dict, blank=True)
    max_turns = models.PositiveIntegerField(
        default=10, db_default=10, help_text="Conversation: the turns a session may take."
    )
    judge_scope = models.CharField(
        max_length=12,
        choices=JudgeScope.choices,
        default=JudgeScope.TURN,
        db_default=JudgeScope.TURN,
        help_text="Conversation: what the evaluator judges after each turn.",
    )
    session_token_budget = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Conversation: the tokens a session may use; empty means no budget.",
    )
    # Budgets (docs/budgets.md): an attempt starts only while each set one has something left.
    budget_tokens = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Tokens all players together may use here."
    )
    budget_cost = models.DecimalField(
        max_digits=14,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="Money all players together may spend here, at the model prices.",
    )
    player_budget_tokens = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Tokens each player may use here."
    )
    player_budget_cost = models.DecimalField(
        max_digits=14,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="Money each player may spend here.",
    )
    fallback_target = models.CharField(
        max_length=200,
        blank=True,
        help_text="When a budget is spent, play on with this model instead of pausing: "
        "'offline', or 'openai/<model>' on the configured endpoint.",
    )

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ChallengeQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["workspace", "app_id"], name="challenge_workspace_app")]
        constraints = [
            models.CheckConstraint(
                condition=Q(success_type__in=["contains", "regex", "custom"]),
                name="challenge_success_type_valid",
            ),
            models.CheckConstraint(
                condition=Q(
                    scoring_strategy__in=[
                        "first",
                        "fastest",
                        "fewest_tokens",
                        "highest_rating",
                        "custom",
                    ]
                ),
                name="challenge_scoring_strategy_valid",
            ),
            models.CheckConstraint(
                condition=Q(target__in=["offline", "openai", "dify"]), name="challenge_target_valid"
            ),
            models.CheckConstraint(
                condition=Q(evaluator_type__in=["rules", "llm-judge", "custom"]),
                name="challenge_evaluator_type_valid",
            ),
            models.CheckConstraint(
                condition=Q(starts_at__isnull=True)
                | Q(ends_at__isnull=True)
                | Q(ends_at__gt=models.F("starts_at")),
                name="challenge_window_ordered",
            ),
            models.CheckConstraint(
                condition=Q(mode__in=["single", "conversation", "agent"]),
                name="challenge_mode_valid",
            ),
            models.CheckConstraint(
                condition=Q(judge_scope__in=["turn", "transcript"]),
                name="challenge_judge_scope_valid",
            ),
            models.CheckConstraint(condition=Q(max_turns__gte=1), name="challenge_max_turns_min"),
            models.CheckConstraint(
                condition=Q(copy_policy__in=["off", "flag", "refuse"]),
                name="challenge_copy_policy_valid",
            ),
            models.CheckConstraint(
                condition=Q(copy_threshold__gt=0, copy_threshold__lte=1),
                name="challenge_copy_threshold_range",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def play_window(self, now=None) -> tuple:
        """(starts, ends): the challenge's own window narrowed by its workspace's event
        window and, when it is in waves, by its wave's (the one open now, else the next,
        else the last); either may be None (open on that side)."""
        workspace = self.workspace
        starts = [moment for moment in (self.starts_at, workspace.starts_at) if moment]
        ends = [moment for moment in (self.ends_at, workspace.ends_at) if moment]
        wave = self.current_wave(now)
        if wave is not None:
            starts.append(wave.opens_at)
            ends.append(wave.closes_at)
        return (max(starts) if starts else None, min(ends) if ends else None)

    def current_wave(self, now=None) -> "Wave | None":
        """The wave whose window rules play (SPEC §10 Waves): the one open now, else the
        next to open, else the last that closed; None when the challenge is in no wave.
        Read once per instance (or from a `prefetch_related("waves")`)."""
        if "waves" not in getattr(self, "_prefetched_objects_cache", {}):
            models.prefetch_related_objects([self], "waves")
        # The prefetched rows as they are: `self.waves.all()` builds a manager each call, and
        # the bridge lane asks on every call.
        prefetched = self._prefetched_objects_cache["waves"]
        waves = sorted(prefetched, key=lambda wave: (wave.opens_at, wave.closes_at))
        if not waves:
            return None
        now = now or timezone.now()
        for wave in waves:
            if now < wave.closes_at:
                return wave
        return waves[-1]

    def is_open(self, now=None) -> bool:
        now = now or timezone.now()
        if not self.is_active:
            return False
        starts, ends = self.play_window(now)
        if starts and now < starts:
            return False
        return not (ends and now >= ends)


class ChallengeAttempt(models.Model):
    class Source(models.TextChoices):
        WEB = "web"
        API = "api"
        BRIDGE = "bridge"
        # Made through the web API (or MCP) with an agent's token: ranks on the agents'
        # boards, every other source on the humans' (docs/agents-as-players.md).
        AGENT = "agent"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # Indexed by attempt_challenge_recent, which starts with it: one index less per insert.
    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, related_name="attempts", db_index=False
    )
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="attempts")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    workflow_run_id = models.CharField(max_length=100, blank=True)

    succeeded = models.BooleanField(default=False)
    score = models.FloatField(null=True, blank=True)
    judge_rating = models.IntegerField(null=True, blank=True)
    judge_feedback = models.TextField(blank=True)
    judge_output_raw = models.JSONField(null=True, blank=True)
    # Every judge's own verdict, [{model, passed, rating, feedback}] (SPEC §10), masked.
    judges = models.JSONField(null=True, blank=True)
    # Waiting for a person (a disputed panel, an appeal, a reopened win): no verdict shown.
    under_review = models.BooleanField(default=False, db_default=False)
    tokens_total = models.PositiveIntegerField(null=True, blank=True)
    # What the model calls of the attempt cost at the workspace's prices (docs/budgets.md).
    cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    # The judge calls' own use (each judge's is in `judges`), counted apart from the
    # target's: `tokens_total` is what the player's prompt drew and what boards rank by.
    judge_tokens = models.PositiveIntegerField(null=True, blank=True)
    judge_cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    elapsed_ms = models.PositiveIntegerField(null=True, blank=True)

    # Kept in full only on success; a failed attempt keeps a fingerprint and a length.
    prompt = models.TextField(blank=True)
    response = models.TextField(blank=True)
    prompt_sha256 = models.CharField(max_length=64, blank=True)
    prompt_length = models.PositiveIntegerField(default=0)
    response_sha256 = models.CharField(max_length=64, blank=True)
    response_length = models.PositiveIntegerField(default=0)

    source = models.CharField(max_length=10, choices=Source.choices, default=Source.WEB)
    # The codename of the target played when the challenge has several (else empty).
    codename = models.CharField(max_length=40, blank=True, default="", db_default="")
    # A success's place under the challenge's strategy (LeaderboardEntry.rank_value of the
    # same standing): a frozen board picks each player's best attempt before the freeze.
    rank_value = models.FloatField(null=True, blank=True)
    # Guess mode ranks a right guess by the prompt whose reply showed the player the secret.
    disclosed_secret = models.BooleanField(default=False, db_default=False)
    # A win's challenge configuration as it was when it was judged (challenges/proofs.py):
    # its signed proof names it, and a replay checks it still holds.
    config_sha256 = models.CharField(max_length=64, blank=True, default="", db_default="")
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    # A flagged near-copy (SPEC §10 Copies): the other player's earlier win it is closest
    # to, and the trigram similarity of the two prompts. Creators' views only.
    near_copy_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_index=False
    )
    near_copy_similarity = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["challenge", "-created_at"], name="attempt_challenge_recent"),
            models.Index(
                fields=["challenge", "end_user", "-created_at"], name="attempt_player_recent"
            ),
            # Partial: the few flagged rows only, so an ordinary insert adds no entry.
            models.Index(
                fields=["near_copy_of"],
                condition=Q(near_copy_of__isnull=False),
                name="attempt_near_copies",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="attempt_unique_idempotency_key",
            ),
            models.CheckConstraint(
                condition=Q(source__in=["web", "api", "bridge", "agent"]),
                name="attempt_source_valid",
            ),
        ]

    def __str__(self) -> str:
        verdict = "solved" if self.succeeded else "failed"
        when = timezone.localtime(self.created_at).strftime("%Y-%m-%d %H:%M")
        return f"{self.end_user} on {self.challenge} at {when} ({verdict})"

    @property
    def proof_id(self):
        """A win's signed proof shares its id (challenges/services/proofs.py)."""
        return self.id if self.succeeded and self.config_sha256 else None

    @property
    def verdict_status(self) -> str:
        if self.under_review:
            return "under_review"
        return "passed" if self.succeeded else "failed"

    @property
    def challenge_succeeded(self) -> bool | None:
        """What players are told: nothing (None) while a person is deciding."""
        return None if self.under_review else self.succeeded


class Review(models.Model):
    """An attempt waiting for (or decided by) a person: a disputed panel, a player's appeal,
    or a win a creator reopened (SPEC §10). At most one is open per attempt, and a player
    appeals an attempt once."""

    class Kind(models.TextChoices):
        PANEL = "panel"
        APPEAL = "appeal"
        REOPENED = "reopened"
        # A red/blue pairing whose judge panel disagreed (its `pairing`, no attempt).
        PAIRING = "pairing"

    class Status(models.TextChoices):
        OPEN = "open"
        DECIDED = "decided"

    class Decision(models.TextChoices):
        PASS = "pass"
        FAIL = "fail"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # An attempt's review names its challenge and attempt; a red/blue pairing's its pairing.
    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, null=True, blank=True, related_name="reviews"
    )
    attempt = models.ForeignKey(
        ChallengeAttempt, on_delete=models.CASCADE, null=True, blank=True, related_name="reviews"
    )
    pairing = models.ForeignKey(
        "redblue.TeamPairing",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="reviews",
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # The player's appeal note, or the creator's reason for reopening.
    note = models.TextField(blank=True)
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decision = models.CharField(max_length=10, choices=Decision.choices, blank=True)
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["workspace", "status", "created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["attempt"], condition=Q(status="open"), name="review_one_open_per_attempt"
            ),
            models.UniqueConstraint(
                fields=["pairing"], condition=Q(status="open"), name="review_one_open_per_pairing"
            ),
            models.CheckConstraint(
                condition=Q(kind="pairing", attempt__isnull=True, pairing__isnull=False)
                | (
                    ~Q(kind="pairing")
                    & Q(attempt__isnull=False, challenge__isnull=False, pairing__isnull=True)
                ),
                name="review_names_one_subject",
            ),
            models.UniqueConstraint(
                fields=["attempt"], condition=Q(kind="appeal"), name="review_one_appeal_per_attempt"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=["panel", "appeal", "reopened", "pairing"]),
                name="review_kind_valid",
            ),
            models.CheckConstraint(
                condition=Q(status="open", decision="")
                | Q(status="decided", decision__in=["pass", "fail"]),
                name="review_decision_matches_status",
            ),
        ]

    def __str__(self) -> str:
        subject = self.attempt_id or self.pairing_id
        return f"{self.get_kind_display()} review of {subject} ({self.status})"


class ReviewAudit(models.Model):
    """One change a person made to a verdict: a decision or a reopening (SPEC §10 audit)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="audit")
    # The review's attempt, or (a red/blue pairing's review) its pairing.
    attempt = models.ForeignKey(
        ChallengeAttempt, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    pairing = models.ForeignKey(
        "redblue.TeamPairing", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    before = models.CharField(max_length=20)
    after = models.CharField(max_length=20)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-at"]
        indexes = [models.Index(fields=["workspace", "-at"])]

    def __str__(self) -> str:
        return f"{self.attempt_id or self.pairing_id}: {self.before} → {self.after}"


class AttemptOwnText(models.Model):
    """A failed attempt's prompt and reply (or a guess's text), masked, kept for the
    player's own history only: the attempt row keeps failed text only when the challenge's
    `keep_failed_prompts` is on (SPEC §3), and creators see winning prompts only."""

    attempt = models.OneToOneField(
        ChallengeAttempt, on_delete=models.CASCADE, primary_key=True, related_name="own_text"
    )
    prompt = models.TextField(blank=True)
    response = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"Own text of {self.attempt_id}"


class PlaySession(models.Model):
    """A conversation (SPEC §9): a player's turns with the model, which sees the history.

    A win is recorded as one ChallengeAttempt by the winning turn, carrying the tokens and
    wall time of the whole session, so boards, first blood, events and proofs stay as they
    are; `attempt` points at it and the transcript hangs off the session.
    """

    class State(models.TextChoices):
        OPEN = "open"
        WON = "won"
        SPENT = "spent"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="sessions")
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="sessions")
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    turns_count = models.PositiveIntegerField(default=0)
    tokens_total = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    # The model's time over every turn; a `fastest` win ranks by it.
    elapsed_ms = models.PositiveIntegerField(default=0)
    # A Dify chatflow's conversation (the bridge records its turns here).
    dify_conversation_id = models.CharField(max_length=100, null=True, blank=True)
    # The target the session was given when it opened (several targets), kept to its end.
    codename = models.CharField(max_length=40, blank=True, default="", db_default="")
    attempt = models.OneToOneField(
        ChallengeAttempt,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="play_session",
    )
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(
                fields=["challenge", "end_user", "-started_at"], name="session_player_recent"
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "dify_conversation_id"],
                condition=Q(dify_conversation_id__isnull=False),
                name="session_unique_dify_conversation",
            ),
            models.CheckConstraint(
                condition=Q(state__in=["open", "won", "spent"]), name="session_state_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"Session of {self.end_user} on {self.challenge} ({self.state})"


class SessionTurn(models.Model):
    """One prompt and reply of a session, both masked as attempts are."""

    session = models.ForeignKey(PlaySession, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField()
    prompt = models.TextField(blank=True)
    response = models.TextField(blank=True)
    tokens_total = models.PositiveIntegerField(null=True, blank=True)
    cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    elapsed_ms = models.PositiveIntegerField(null=True, blank=True)
    succeeded = models.BooleanField(default=False)
    judge_rating = models.IntegerField(null=True, blank=True)
    judge_feedback = models.TextField(blank=True)
    workflow_run_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "index"]
        constraints = [
            models.UniqueConstraint(fields=["session", "index"], name="session_turn_unique_index"),
        ]

    def __str__(self) -> str:
        return f"Turn {self.index} of {self.session_id}"


class AgentRun(models.Model):
    """One run of an agent scenario (SPEC §9): the player's slot texts, the loop's steps, its
    outcome. Every run records a ChallengeAttempt (`attempt`), so boards, first blood, proofs,
    copies, budgets and the feed treat it as any play; the trace hangs off the run."""

    class StopReason(models.TextChoices):
        FINAL = "final", "The agent answered"
        MAX_STEPS = "max_steps", "It reached its step limit"
        TOKEN_BUDGET = "token_budget", "It spent its token budget"
        MAX_TOOL_CALLS = "max_tool_calls", "It reached the cap on tool calls"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="agent_runs")
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="agent_runs")
    attempt = models.OneToOneField(
        ChallengeAttempt, on_delete=models.CASCADE, related_name="agent_run"
    )
    codename = models.CharField(max_length=40, blank=True, default="")
    # The player's text per slot name, masked as prompts are.
    slots = models.JSONField(default=dict)
    succeeded = models.BooleanField(default=False)
    stop_reason = models.CharField(max_length=20, choices=StopReason.choices)
    # Why it won or not, in words the player reads.
    why = models.TextField(blank=True)
    final_answer = models.TextField(blank=True)
    tokens_total = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    elapsed_ms = models.PositiveIntegerField(default=0)
    # [{task, passed}]: the scenario's benign tasks on this run's defences (SPEC §9).
    benign = models.JSONField(default=list)
    benign_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["challenge", "end_user", "-created_at"], name="agent_run_recent"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    stop_reason__in=["final", "max_steps", "token_budget", "max_tool_calls"]
                ),
                name="agent_run_stop_reason_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"Agent run of {self.end_user} on {self.challenge} ({self.stop_reason})"


class AgentStep(models.Model):
    """One step of a run's trace: a model call, a tool call, its result, the final answer."""

    class Kind(models.TextChoices):
        MODEL = "model"
        TOOL_CALL = "tool_call"
        TOOL_RESULT = "tool_result"
        FINAL = "final"

    run = models.ForeignKey(AgentRun, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=Kind.choices)
    tool = models.CharField(max_length=64, blank=True)
    args = models.JSONField(null=True, blank=True)
    # The model's text, the tool's result or the final answer, masked.
    content = models.TextField(blank=True)
    # A refused call: the defence that refused it (tool_guard, llm_tool_check, …).
    refused_by = models.CharField(max_length=20, blank=True)
    tokens_total = models.PositiveIntegerField(null=True, blank=True)
    cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    elapsed_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="agent_step_unique_index"),
            models.CheckConstraint(
                condition=Q(kind__in=["model", "tool_call", "tool_result", "final"]),
                name="agent_step_kind_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"Step {self.index} ({self.kind}) of {self.run_id}"


class AgentBenignCheck(models.Model):
    """The scenario's benign tasks, run once per configuration (docs/agents.md): they run
    with every slot empty, so a player's text cannot change them, and each later run of
    the same configuration on the same target shows these outcomes instead of paying for
    them again. A changed challenge has a new `config_sha256` and runs them afresh."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="+")
    # The digest the challenge's wins pin (challenges/proofs.py).
    config_sha256 = models.CharField(max_length=64)
    # A keyed digest of the target played and the agent's system prompt as sent (which
    # holds a secret when the scenario names one): never the secret itself.
    setting = models.CharField(max_length=64)
    # [{task, passed}]
    benign = models.JSONField(default=list)
    # What the check's model calls used, spent against the workspace and the challenge.
    tokens_total = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["challenge", "config_sha256", "setting"], name="agent_benign_check_once"
            ),
        ]

    def __str__(self) -> str:
        return f"Benign tasks of {self.challenge_id} ({self.config_sha256[:12]})"


class WinningPrompt(models.Model):
    """A win's prompt as the near-copy check compares it (SPEC §10 Copies): the stored,
    masked prompt normalised like the `contains` rule. Its trigram index (pg_trgm, GIN,
    made by migration 0011 on PostgreSQL) makes the check one indexed query."""

    attempt = models.OneToOneField(
        ChallengeAttempt, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    # Indexed by winning_prompt_challenge, which starts with it.
    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    text = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["challenge", "created_at"], name="winning_prompt_challenge"),
        ]

    def __str__(self) -> str:
        return f"Winning prompt of {self.attempt_id}"


class ProofKey(models.Model):
    """A workspace's Ed25519 key for signing proofs of wins. The current one has no
    `retired_at`; retired keys stay published so earlier proofs keep verifying."""

    key_id = models.CharField(max_length=32, primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="proof_keys")
    # Base64 of the raw 32-byte keys; the private one encrypted at rest as secrets are.
    public_key = models.CharField(max_length=44)
    private_key = EncryptedTextField()
    created_at = models.DateTimeField(default=timezone.now)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace"],
                condition=Q(retired_at__isnull=True),
                name="proof_key_one_current",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key_id} ({self.workspace})"


class Proof(models.Model):
    """The signed proof of a winning attempt (SPEC §10), one per attempt, sharing its id.
    `payload` is the canonical JSON exactly as signed."""

    attempt = models.OneToOneField(
        ChallengeAttempt, on_delete=models.CASCADE, primary_key=True, related_name="proof"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    key = models.ForeignKey(ProofKey, on_delete=models.RESTRICT, related_name="proofs")
    payload = models.TextField()
    signature = models.CharField(max_length=88)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Proof of {self.attempt_id}"


class TargetTurn(models.Model):
    """Round-robin assignment of several targets: how many a player has been given on a
    challenge; the next one is `given % len(targets)`, counted under a row lock."""

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="+")
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    given = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["challenge", "end_user"], name="target_turn_unique_player"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.end_user} on {self.challenge_id}: {self.given} targets given"


class LeaderboardEntry(models.Model):
    """A player's best attempt on a challenge, kept current as attempts are recorded.

    `rank_value` orders entries under the challenge's strategy (lower is better) and
    `achieved_at` breaks ties (earlier is better), so the board is one index range scan.
    """

    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, related_name="leaderboard_entries"
    )
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    attempt = models.ForeignKey(ChallengeAttempt, on_delete=models.CASCADE, related_name="+")
    rank_value = models.FloatField()
    achieved_at = models.DateTimeField()
    score = models.FloatField(null=True)
    judge_rating = models.IntegerField(null=True)
    tokens_total = models.PositiveIntegerField(null=True)
    elapsed_ms = models.PositiveIntegerField(null=True)
    first_succeeded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["challenge", "end_user"], name="leaderboard_unique_player"
            ),
        ]
        indexes = [
            models.Index(
                fields=["challenge", "rank_value", "achieved_at", "id"],
                name="leaderboard_standing",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.end_user} on {self.challenge_id}: {self.rank_value}"


class BridgeKey(models.Model):
    """A workspace's key for the Dify bridge; shown once, only its SHA-256 is kept."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="bridge_keys")
    name = models.CharField(max_length=100, blank=True)
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16)
    # Standard Webhooks signatures are HMACs keyed with the key itself, so the server
    # keeps an encrypted copy for verifying them; the hash serves Bearer look-ups.
    secret_encrypted = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.workspace})"


class BridgeDelivery(models.Model):
    """The first answer given to a Dify run, replayed when Dify delivers it again."""

    # Indexed by bridge_delivery_unique_run, which starts with it.
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    endpoint = models.CharField(max_length=40)
    workflow_run_id = models.CharField(max_length=100)
    attempt = models.ForeignKey(
        ChallengeAttempt, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    response = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "endpoint", "workflow_run_id"],
                name="bridge_delivery_unique_run",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint} run {self.workflow_run_id}"


class ChallengeCollection(models.Model):
    class Strategy(models.TextChoices):
        SUM = "sum"
        FASTEST_TOTAL = "fastest_total"
        FEWEST_TOKENS_TOTAL = "fewest_tokens_total"
        HIGHEST_AVG_RATING = "highest_avg_rating"
        CUSTOM = "custom"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="challenge_collections"
    )
    app_id = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    instructions_md = models.TextField(blank=True)
    theme = models.JSONField(default=dict, blank=True)
    is_public = models.BooleanField(default=True)
    in_order = models.BooleanField(
        default=False, help_text="Levels: each challenge opens when the one before is solved."
    )
    scoring_strategy = models.CharField(
        max_length=24, choices=Strategy.choices, default=Strategy.SUM
    )
    scoring_plugin_id = models.CharField(max_length=200, blank=True)
    scoring_entrypoint = models.CharField(max_length=300, blank=True)
    scoring_config = models.JSONField(default=dict, blank=True)
    challenges = models.ManyToManyField(
        Challenge, through="CollectionItem", related_name="collections"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    scoring_strategy__in=[
                        "sum",
                        "fastest_total",
                        "fewest_tokens_total",
                        "highest_avg_rating",
                        "custom",
                    ]
                ),
                name="collection_scoring_strategy_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class CollectionItem(models.Model):
    collection = models.ForeignKey(
        ChallengeCollection, on_delete=models.CASCADE, related_name="items"
    )
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "challenge"], name="collection_item_unique_challenge"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.position}. {self.challenge.name}"


class ChallengePrerequisite(models.Model):
    """`challenge` stays locked for a player until they have solved `prerequisite` (a
    challenge of the same workspace); see challenges.selectors.levels."""

    # Indexed by prerequisite_unique_pair, which starts with it.
    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, related_name="prerequisite_links", db_index=False
    )
    prerequisite = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["challenge", "prerequisite"], name="prerequisite_unique_pair"
            ),
            models.CheckConstraint(
                condition=~Q(challenge=models.F("prerequisite")), name="prerequisite_not_itself"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.challenge_id} needs {self.prerequisite_id}"


class Hint(models.Model):
    """A challenge's hint: free (cost 0) or paid for with site-scoreboard points."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed by hint_challenge_order, which starts with it.
    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, related_name="hints", db_index=False
    )
    order = models.PositiveIntegerField(default=0, help_text="Hints are shown lowest first.")
    body_md = models.TextField(help_text="Markdown; shown once unlocked (at once when free).")
    cost = models.PositiveIntegerField(
        default=0, help_text="Points taken off the player's scoreboard total; 0 is free."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["order", "created_at", "id"]
        indexes = [models.Index(fields=["challenge", "order"], name="hint_challenge_order")]

    def __str__(self) -> str:
        return f"Hint {self.order}"

    @property
    def is_free(self) -> bool:
        return self.cost == 0


class HintUnlock(models.Model):
    """A player paid for a hint, once: `cost` is what it cost then (a later price change
    does not re-bill anyone)."""

    # Indexed by hint_unlock_once, which starts with it.
    hint = models.ForeignKey(Hint, on_delete=models.CASCADE, related_name="unlocks", db_index=False)
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    cost = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hint", "end_user"], name="hint_unlock_once"),
        ]

    def __str__(self) -> str:
        return f"{self.end_user_id} unlocked {self.hint_id}"


class ModelPrice(models.Model):
    """What a model costs a workspace per 1k tokens (SPEC §10 Prices and budgets). `model` is
    a challenge's `target_model` (or its target, e.g. `offline`) or a judge's `provider/model`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    input_per_1k = models.DecimalField(max_digits=12, decimal_places=6)
    output_per_1k = models.DecimalField(max_digits=12, decimal_places=6)
    currency = models.CharField(max_length=3, default="USD")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "model"], name="model_price_unique"),
            models.CheckConstraint(
                condition=Q(input_per_1k__gte=0) & Q(output_per_1k__gte=0),
                name="model_price_not_negative",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.model}: {self.input_per_1k}/{self.output_per_1k} {self.currency} per 1k"


class Spend(models.Model):
    """What was really used, per scope: the workspace (no challenge), a challenge (no player)
    and a player on a challenge. Settled in the transaction that records the use."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    end_user = models.ForeignKey(
        EndUser, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # Everything used (the targets' and the judges'); `judge_*` is the judges' part of it.
    tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=16, decimal_places=6, default=0)
    judge_tokens = models.PositiveBigIntegerField(default=0, db_default=0)
    judge_cost = models.DecimalField(max_digits=16, decimal_places=6, default=0, db_default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "challenge", "end_user"],
                nulls_distinct=False,
                name="spend_unique_scope",
            ),
        ]

    def __str__(self) -> str:
        return f"Spend {self.tokens} tokens, {self.cost}"


class BudgetHold(models.Model):
    """An attempt's reservation of its estimated use while its model call runs: counted as
    used by the check of every other attempt, replaced by the real use when it is recorded,
    deleted when it fails, and ignored once expired (a process that died mid-call)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="+")
    end_user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    tokens = models.PositiveBigIntegerField()
    cost = models.DecimalField(max_digits=16, decimal_places=6)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["challenge", "expires_at"], name="budget_hold_challenge")]

    def __str__(self) -> str:
        return f"Hold of {self.tokens} tokens until {self.expires_at}"


class Bounty(models.Model):
    """Money a creator offers for breaking a challenge (SPEC §10 Bounties), or one of its
    several targets (`codename`). Who earns it is computed from the wins as they stand
    (challenges/selectors/bounties.py), so an overturned win stops earning at once."""

    class Kind(models.TextChoices):
        FIRST_BREAK = "first_break", "First break"
        PER_BREAK = "per_break", "Per break"
        FASTEST_N = "fastest_n", "Fastest N"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="bounties")
    codename = models.CharField(
        max_length=40,
        blank=True,
        default="",
        help_text="Several targets: only breaks of this codename earn it; empty: any.",
    )
    kind = models.CharField(max_length=12, choices=Kind.choices)
    amount = models.DecimalField(max_digits=12, decimal_places=2, help_text="Paid to each winner.")
    currency = models.CharField(max_length=3, default="USD")
    cap = models.DecimalField(
        max_digits=14,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="per_break: the most paid in total; fastest_n: how many winners (N).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name_plural = "bounties"
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="bounty_amount_positive"),
            models.CheckConstraint(
                condition=Q(kind__in=["first_break", "per_break", "fastest_n"]),
                name="bounty_kind_valid",
            ),
            models.CheckConstraint(
                condition=Q(cap__isnull=True) | Q(cap__gt=0), name="bounty_cap_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on {self.challenge}: {self.amount} {self.currency}"

    @property
    def winners_allowed(self) -> int | None:
        """How many players it pays at most; None: no limit."""
        if self.kind == self.Kind.FIRST_BREAK:
            return 1
        if self.cap is None:
            return None
        if self.kind == self.Kind.FASTEST_N:
            return int(self.cap)
        return int(self.cap // self.amount)


class Wave(models.Model):
    """A set of challenges that open and close together on a schedule (SPEC §10 Waves).
    Its window decides play (Challenge.play_window); `state` is what the beat task last
    announced (challenges/services/waves.py)."""

    class State(models.TextChoices):
        SCHEDULED = "scheduled"
        OPEN = "open"
        CLOSED = "closed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=120)
    challenges = models.ManyToManyField(Challenge, related_name="waves", blank=True)
    opens_at = models.DateTimeField()
    closes_at = models.DateTimeField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.SCHEDULED)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["opens_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(closes_at__gt=models.F("opens_at")), name="wave_window_ordered"
            ),
            models.CheckConstraint(
                condition=Q(state__in=["scheduled", "open", "closed"]), name="wave_state_valid"
            ),
        ]
        indexes = [models.Index(fields=["state", "opens_at"], name="wave_due")]

    def __str__(self) -> str:
        return self.name

    def is_open(self, now=None) -> bool:
        now = now or timezone.now()
        return self.opens_at <= now < self.closes_at

    @property
    def phase(self) -> str:
        """Where its window stands now (play follows this; `state` may lag by a beat)."""
        now = timezone.now()
        if now < self.opens_at:
            return self.State.SCHEDULED
        return self.State.OPEN if now < self.closes_at else self.State.CLOSED
