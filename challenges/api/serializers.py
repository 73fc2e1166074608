from drf_spectacular.utils import OpenApiParameter, extend_schema_field
from rest_framework import serializers

from challenges.agents.public import PublicAgentSlotSerializer, PublicAgentToolSerializer
from challenges.models import Challenge, ChallengeAttempt, Secret, Wave
from challenges.review_subjects import pairing_reviews
from challenges.selectors.bounties import (
    BountyStanding,
    challenge_bounties,
    challenge_waves,
    challenges_bounties,
)
from challenges.services.challenges import CHALLENGE_FIELDS
from challenges.targets import (
    codenames,
    revealed_targets,
)
from core.api import MoneyField, StrictSerializer
from players.inputs import BudgetSerializer, budget_out


class ChallengeOutputSerializer(serializers.ModelSerializer):
    workspace = serializers.UUIDField(source="workspace_id")
    created_by = serializers.IntegerField(source="created_by_id", allow_null=True)
    updated_by = serializers.IntegerField(source="updated_by_id", allow_null=True)
    budget = serializers.SerializerMethodField(help_text="{tokens, cost} or null")
    player_budget = serializers.SerializerMethodField(help_text="{tokens, cost} or null")

    @extend_schema_field(BudgetSerializer(allow_null=True))
    def get_budget(self, challenge: Challenge) -> dict | None:
        return budget_out(challenge.budget_tokens, challenge.budget_cost)

    @extend_schema_field(BudgetSerializer(allow_null=True))
    def get_player_budget(self, challenge: Challenge) -> dict | None:
        return budget_out(challenge.player_budget_tokens, challenge.player_budget_cost)

    class Meta:
        model = Challenge
        fields = (
            "id",
            "workspace",
            *CHALLENGE_FIELDS,
            "budget",
            "player_budget",
            "fallback_target",
            "created_by",
            "updated_by",
            "created_at",
            "updated_at",
        )


class SecretCreateSerializer(StrictSerializer):
    workspace = serializers.CharField(required=False)
    name = serializers.CharField(max_length=100)
    value = serializers.CharField(max_length=10000, trim_whitespace=False)


class SecretUpdateSerializer(StrictSerializer):
    value = serializers.CharField(max_length=10000, trim_whitespace=False)


class SecretOutputSerializer(serializers.ModelSerializer):
    workspace = serializers.UUIDField(source="workspace_id")
    has_value = serializers.SerializerMethodField()

    class Meta:
        model = Secret
        fields = ("id", "workspace", "name", "has_value", "created_at", "updated_at")

    def get_has_value(self, secret: Secret) -> bool:
        return True


class AttemptOutputSerializer(serializers.ModelSerializer):
    end_user = serializers.SerializerMethodField()
    proof_id = serializers.UUIDField(read_only=True, allow_null=True)
    # A flagged near-copy (SPEC §10 Copies): the earlier win it copies, and how closely.
    near_copy_of = serializers.UUIDField(source="near_copy_of_id", allow_null=True)
    similarity = serializers.FloatField(source="near_copy_similarity", allow_null=True)
    cost = MoneyField(read_only=True)
    judge_cost = MoneyField(read_only=True)
    verdict_status = serializers.ChoiceField(["passed", "failed", "under_review"], read_only=True)
    judges = serializers.ListField(child=serializers.DictField(), allow_null=True)

    class Meta:
        model = ChallengeAttempt
        fields = (
            "id",
            "challenge_id",
            "end_user",
            "account_id",
            "workflow_run_id",
            "succeeded",
            "verdict_status",
            "judges",
            "score",
            "judge_rating",
            "judge_feedback",
            "judge_output_raw",
            "tokens_total",
            "cost",
            "judge_tokens",
            "judge_cost",
            "elapsed_ms",
            "prompt",
            "response",
            "prompt_length",
            "response_length",
            "source",
            "created_at",
            "proof_id",
            "near_copy_of",
            "similarity",
        )

    def get_end_user(self, attempt: ChallengeAttempt) -> dict:
        end_user = attempt.end_user
        return {
            "id": str(end_user.id),
            "external_id": end_user.external_id,
            "name": end_user.public_name,
        }


class RevealedTargetSerializer(serializers.Serializer):
    codename = serializers.CharField()
    model = serializers.CharField()


class PublicAgentSerializer(serializers.Serializer):
    """What a player sees of a scenario: never its system prompt, tool results, win rule or
    benign tasks."""

    task = serializers.CharField()
    tools = PublicAgentToolSerializer(many=True)
    slots = PublicAgentSlotSerializer(many=True)
    max_steps = serializers.IntegerField()


class PublicBountySerializer(serializers.Serializer):
    """A bounty as the challenge page shows it (docs/bounties.md)."""

    kind = serializers.CharField(source="bounty.kind", help_text="first_break|fastest_n|per_break")
    label = serializers.CharField(help_text="What the page reads, e.g. “First break: 50 USD”")
    amount = MoneyField(source="bounty.amount", help_text="Paid to each winner")
    currency = serializers.CharField(source="bounty.currency")
    cap = MoneyField(
        source="bounty.cap", help_text="per_break: the most paid in total; fastest_n: N"
    )
    codename = serializers.CharField(
        source="bounty.codename", help_text="Only breaks of this target earn it; empty: any"
    )
    claimed = serializers.SerializerMethodField(help_text="No place is left to win")
    places_left = serializers.IntegerField(
        allow_null=True, help_text="Winners it may still pay; null: no limit"
    )

    def get_claimed(self, standing: BountyStanding) -> bool:
        return standing.places_left == 0


class PublicWaveSerializer(serializers.Serializer):
    name = serializers.CharField()
    opens_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField()
    state = serializers.ChoiceField(
        source="phase",
        choices=Wave.State.values,
        help_text="Where its window stands now (play follows it to the second)",
    )


class PublicChallengeListSerializer(serializers.ListSerializer):
    """Many challenges: their bounties read once for all of them."""

    def to_representation(self, data):
        challenges = list(data.all() if hasattr(data, "all") else data)
        self.child.bounties_of = challenges_bounties(challenges=challenges)
        return super().to_representation(challenges)


class PublicChallengeSerializer(serializers.ModelSerializer):
    is_open = serializers.SerializerMethodField()
    agent = serializers.SerializerMethodField(
        help_text="Agent challenges: the task, the tools and the slots you write into; null "
        "otherwise."
    )
    codenames = serializers.SerializerMethodField(
        help_text="Several targets: the codenames players see (empty for one target)."
    )
    targets = serializers.SerializerMethodField(
        help_text="Once the creator reveals them: which model each codename stands for; "
        "null until then."
    )
    bounties = serializers.SerializerMethodField(
        help_text="What breaking it pays, as its page shows (SPEC §10 Bounties)."
    )
    waves = serializers.SerializerMethodField(
        help_text="The waves it plays in, in schedule order (empty: no wave)."
    )

    class Meta:
        model = Challenge
        list_serializer_class = PublicChallengeListSerializer
        fields = (
            "id",
            "slug",
            "name",
            "description",
            "goal",
            "instructions_md",
            "theme",
            "scoring_strategy",
            "evaluator_type",
            "answer_mode",
            "mode",
            "max_turns",
            "judge_scope",
            "session_token_budget",
            "agent",
            "target",
            "max_attempts_per_hour",
            "starts_at",
            "ends_at",
            "is_open",
            "codenames",
            "target_assignment",
            "targets",
            "bounties",
            "waves",
            "created_at",
        )

    def get_is_open(self, challenge: Challenge) -> bool:
        return challenge.is_open()

    @extend_schema_field(PublicBountySerializer(many=True))
    def get_bounties(self, challenge: Challenge) -> list[dict]:
        # The page's own selector; a list gave every challenge's bounties at once.
        bounties_of = getattr(self, "bounties_of", None)
        standings = (
            bounties_of.get(challenge.id, [])
            if bounties_of is not None
            else challenge_bounties(challenge=challenge)
        )
        return PublicBountySerializer(standings, many=True).data

    @extend_schema_field(PublicWaveSerializer(many=True))
    def get_waves(self, challenge: Challenge) -> list[dict]:
        return PublicWaveSerializer(challenge_waves(challenge=challenge), many=True).data

    @extend_schema_field(PublicAgentSerializer(allow_null=True))
    def get_agent(self, challenge: Challenge) -> dict | None:
        if challenge.mode != Challenge.Mode.AGENT or not challenge.agent:
            return None
        return PublicAgentSerializer(challenge.agent).data

    def get_codenames(self, challenge: Challenge) -> list[str]:
        return codenames(challenge)

    @extend_schema_field(RevealedTargetSerializer(many=True, allow_null=True))
    def get_targets(self, challenge: Challenge) -> list[dict[str, str]] | None:
        return revealed_targets(challenge)


PLAYER_SOURCE_HELP = (
    "site: a site account; dify: a Dify end user sent through the bridge (boards mark these)"
)


class LeaderboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    source = serializers.CharField(help_text=PLAYER_SOURCE_HELP)
    end_user_id = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    judge_rating = serializers.IntegerField(allow_null=True)
    tokens_total = serializers.IntegerField(allow_null=True)
    elapsed_ms = serializers.IntegerField(allow_null=True)
    achieved_at = serializers.DateTimeField()
    attempt_id = serializers.CharField()
    targets_broken = serializers.IntegerField(
        required=False,
        help_text="Several targets, combined board only: the targets this player has broken.",
    )

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if data.get("targets_broken") is None:
            data.pop("targets_broken", None)
        return data


PLAYERS_PARAMETER = OpenApiParameter(
    "players",
    str,
    enum=["all", "agents", "humans"],
    description="agents: only wins made with an agent's token; humans: only the others; "
    "all (default): every win",
)


def frozen_at_field() -> serializers.DateTimeField:
    """A board's `frozen_at`, in every board payload (a challenge's, a collection's, the
    scoreboards)."""
    return serializers.DateTimeField(
        allow_null=True,
        help_text="While the event's scoreboard is frozen: the standings are as of this moment.",
    )


def bracket_field() -> serializers.CharField:
    return serializers.CharField(allow_null=True, help_text="The bracket shown (slug), or null")


def players_field() -> serializers.ChoiceField:
    return serializers.ChoiceField(
        ["all", "agents", "humans"],
        default="all",
        help_text="Whose wins count: agents' (made with an agent's token), humans', all",
    )


class LeaderboardSerializer(serializers.Serializer):
    challenge_id = serializers.UUIDField()
    target = serializers.CharField(
        required=False, help_text="Several targets: the codename whose board this is."
    )
    scoring_strategy = serializers.CharField()
    frozen_at = frozen_at_field()
    bracket = bracket_field()
    players = players_field()
    limit = serializers.IntegerField()
    entries = LeaderboardRowSerializer(many=True)


def review_transcript(review) -> dict:
    """The attempt's prompt and reply; for an appeal of an attempt that kept no text, the
    player's own copy: by appealing they ask the creator to read it."""
    if review.kind == "pairing":
        return pairing_reviews().transcript(review)
    attempt = review.attempt
    if not attempt.prompt and review.kind == "appeal":
        own = getattr(attempt, "own_text", None) if hasattr(attempt, "own_text") else None
        if own is not None:
            return {"prompt": own.prompt, "response": own.response}
    return {"prompt": attempt.prompt, "response": attempt.response}


class ReviewOutputSerializer(serializers.Serializer):
    """A review row as creators see it (SPEC §10): the transcript unmasked as stored."""

    id = serializers.UUIDField()
    attempt_id = serializers.UUIDField(allow_null=True, help_text="Null for a pairing's review")
    challenge_id = serializers.UUIDField(allow_null=True)
    pairing_id = serializers.UUIDField(
        allow_null=True, help_text="kind 'pairing': the red/blue pairing under review"
    )
    kind = serializers.CharField(help_text="panel, appeal, reopened or pairing (red/blue)")
    status = serializers.CharField()
    transcript = serializers.SerializerMethodField()
    judges = serializers.SerializerMethodField()
    note = serializers.CharField()
    decision = serializers.CharField(allow_blank=True)
    reason = serializers.CharField(allow_blank=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()

    def get_transcript(self, review) -> dict:
        return review_transcript(review)

    def get_judges(self, review) -> list[dict]:
        if review.kind == "pairing":
            return pairing_reviews().judges(review)
        return review.attempt.judges or []


class AuditOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    actor = serializers.SerializerMethodField()
    at = serializers.DateTimeField()
    attempt_id = serializers.UUIDField(allow_null=True)
    pairing_id = serializers.UUIDField(allow_null=True)
    review_id = serializers.UUIDField()
    before = serializers.CharField()
    after = serializers.CharField()
    reason = serializers.CharField()

    def get_actor(self, entry) -> str | None:
        return entry.actor.get_username() if entry.actor else None
