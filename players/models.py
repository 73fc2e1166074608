import uuid

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower
from django.utils import timezone

from players.validators import printable_name, validate_display_name

# A site account's player in a workspace is the EndUser with this external id + account pk.
ACCOUNT_EXTERNAL_ID_PREFIX = "account:"
TEAM_SIZE_LIMIT_MAX = 100


def account_external_id(account_pk) -> str:
    """The external id of a site account's player (and of its arena identity)."""
    return f"{ACCOUNT_EXTERNAL_ID_PREFIX}{account_pk}"


def is_account_external_id(external_id: str) -> bool:
    """Whether the id has the form reserved for site accounts: no Dify user may send it."""
    return external_id.startswith(ACCOUNT_EXTERNAL_ID_PREFIX)


class Workspace(models.Model):
    """The seed's tenant: every creator-owned row carries one. It is also the event: its
    play window, its scoreboard freeze and who may see its boards (docs/events.md)."""

    class BoardVisibility(models.TextChoices):
        PUBLIC = "public", "Public: anyone"
        PLAYERS = "players", "Players: signed-in players of this workspace"
        HIDDEN = "hidden", "Hidden: only the workspace's creators"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    # Players form teams of at most this many (players/teams/); 0 turns teams off here.
    team_size_limit = models.PositiveSmallIntegerField(
        default=4,
        validators=[MaxValueValidator(TEAM_SIZE_LIMIT_MAX)],
        help_text="Most players in one team; 0 turns teams off in this workspace.",
    )
    starts_at = models.DateTimeField(
        null=True, blank=True, help_text="No attempt is accepted before this moment."
    )
    ends_at = models.DateTimeField(
        null=True, blank=True, help_text="No attempt is accepted from this moment on."
    )
    freeze_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="From this moment boards and the scoreboard show the standings as of it, "
        "until the freeze is lifted or the event ends.",
    )
    # Set when a creator lifts the freeze by hand; a new freeze_at clears it.
    freeze_lifted_at = models.DateTimeField(null=True, blank=True)
    board_visibility = models.CharField(
        max_length=10, choices=BoardVisibility.choices, default=BoardVisibility.PUBLIC
    )
    # The event's budget (docs/budgets.md): attempts start only while neither is used up.
    budget_tokens = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Tokens every challenge here may use together."
    )
    budget_cost = models.DecimalField(
        max_digits=14,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="Money every challenge here may spend together, at the model prices.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Bumped by every save: per-process caches (the bridge lane) check it in their writes.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(starts_at__isnull=True)
                | Q(ends_at__isnull=True)
                | Q(ends_at__gt=models.F("starts_at")),
                name="workspace_window_ordered",
            ),
            models.CheckConstraint(
                condition=Q(board_visibility__in=["public", "players", "hidden"]),
                name="workspace_board_visibility_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def event_open(self, now=None) -> bool:
        """Whether the event's window (when it has one) admits an attempt now."""
        now = now or timezone.now()
        if self.starts_at and now < self.starts_at:
            return False
        return not (self.ends_at and now >= self.ends_at)

    def board_cutoff(self, now=None):
        """The moment public standings are shown as of, or None when they are live: the
        freeze holds from `freeze_at` until lifted by hand or until the event ends."""
        now = now or timezone.now()
        if self.freeze_at is None or now < self.freeze_at or self.freeze_lifted_at is not None:
            return None
        if self.ends_at and now >= self.ends_at:
            return None
        return self.freeze_at


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        EDITOR = "editor"
        VIEWER = "viewer"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.EDITOR)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="membership_unique_user"),
            models.CheckConstraint(
                condition=Q(role__in=["owner", "editor", "viewer"]), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    @property
    def can_write(self) -> bool:
        return self.role in (self.Role.OWNER, self.Role.EDITOR)


class ApiToken(models.Model):
    """A bearer token for the console and web APIs; only its SHA-256 is stored. Revoking
    one deletes it."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    name = models.CharField(max_length=100, blank=True)
    # An agent's token (SPEC §9 Agents): attempts made with it carry source "agent" and
    # rank on the agents' boards (docs/agents-as-players.md).
    agent = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


class Bracket(models.Model):
    """A division of a workspace's players ("students", "professionals"): boards and the
    scoreboard can be filtered to one."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="brackets")
    name = models.CharField(max_length=60)
    slug = models.SlugField(max_length=60)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "slug"], name="bracket_unique_slug"),
        ]

    def __str__(self) -> str:
        return self.name


class EndUser(models.Model):
    """Who played in a workspace: a Dify `user` string or a logged-in account."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="end_users")
    external_id = models.CharField(max_length=255)
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="end_users",
    )
    display_name = models.CharField(max_length=150, blank=True, validators=[validate_display_name])
    # A Dify identity linked to a site account's player in the same workspace (a link
    # code): its runs record as that player. Only Dify identities are linked.
    linked_to = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="linked_identities",
    )
    linked_at = models.DateTimeField(null=True, blank=True)
    # The player's bracket in this workspace (chosen once by the player, or set by a creator).
    bracket = models.ForeignKey(
        "Bracket", on_delete=models.SET_NULL, null=True, blank=True, related_name="end_users"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "external_id"], name="end_user_unique_external_id"
            ),
            models.UniqueConstraint(
                fields=["workspace", "account"],
                condition=Q(account__isnull=False),
                name="end_user_unique_account",
            ),
        ]

    def __str__(self) -> str:
        return self.display_name or self.external_id

    @property
    def source(self) -> str:
        """ "site" for a site account's player, "dify" for a `user` sent through the bridge."""
        return "site" if is_account_external_id(self.external_id) else "dify"

    @property
    def public_name(self) -> str:
        if self.display_name:
            return self.display_name
        if self.source == "site":
            return f"player-{self.external_id.removeprefix(ACCOUNT_EXTERNAL_ID_PREFIX)}"
        shown = printable_name(self.external_id)
        local, at, domain = shown.partition("@")
        if at:  # a Dify user id that is an email address is not shown in public
            return f"{local[:2]}…@{domain}"[:40]
        return shown[:40] or "dify-user"


class Team(models.Model):
    """Players of one workspace who score together: a challenge any member solved counts
    once for the team (challenges.selectors.team_scoreboard). Services in players/teams/."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=60, validators=[validate_display_name])
    # Shown to the team's members only; whoever has it may join while a seat is free.
    invite_code = models.CharField(max_length=16, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                F("workspace"), Lower("name"), name="team_unique_name_in_workspace"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class TeamMember(models.Model):
    """A player in a team. An EndUser is one player in one workspace, so its uniqueness
    here is "one team per player and workspace", kept by the database."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="members")
    end_user = models.OneToOneField(EndUser, on_delete=models.CASCADE, related_name="team_member")
    is_captain = models.BooleanField(default=False)
    joined_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["joined_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["team"], condition=Q(is_captain=True), name="team_one_captain"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.end_user} in {self.team}"


class LinkCode(models.Model):
    """A one-time code a player hands to a Dify run to link that Dify identity to their
    account in one workspace. Only its SHA-256 is stored; it is shown once."""

    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="link_codes"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    code_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        EndUser, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    def __str__(self) -> str:
        return f"link code for {self.account} in {self.workspace}"


class PlayerProfile(models.Model):
    account = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="player_profile",
    )
    display_name = models.CharField(max_length=150, blank=True, validators=[validate_display_name])
    avatar_url = models.URLField(blank=True)
    notify_on_first_blood = models.BooleanField(default=True)
    notify_on_record_beaten = models.BooleanField(default=True)
    # Mail when a wave of challenges opens in a workspace the player played in.
    notify_on_waves = models.BooleanField(default=True, db_default=True)
    # Consent to the public dataset export (SPEC §10 Exports, docs/exports.md): only the
    # attempts of players who said yes go into it, masked and under a pseudonym.
    share_attempts = models.BooleanField(default=False, db_default=False)
    # One of settings.LANGUAGES (taken from Accept-Language at sign-up); mails use it.
    interface_language = models.CharField(max_length=10, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # What the player edits (profile page, web API), in the order both show it.
    EDITABLE_FIELDS = (
        "display_name",
        "avatar_url",
        "notify_on_first_blood",
        "notify_on_record_beaten",
        "notify_on_waves",
        "interface_language",
        "share_attempts",
    )

    def __str__(self) -> str:
        return self.display_name or str(self.account)

    def editable_values(self) -> dict:
        return {name: getattr(self, name) for name in self.EDITABLE_FIELDS}
