from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from challenges.agents.public import PublicAgentSlotSerializer, PublicAgentToolSerializer
from challenges.models import PROMPT_MAX_CHARS
from core.api import StrictSerializer
from judging.category_judge import builtin_category, effective_suite
from redblue.models import RedBlueChallenge, SelectionPolicy, Team, TeamPairing, TeamSubmission
from redblue.teams.agent import trace_for_red
from redblue.teams.selectors import ATTACK, DEFENSE, pairing_texts_readable
from redblue.teams.services.challenges import RED_BLUE_FIELDS

POLICY_HELP = " | ".join(SelectionPolicy.values)
SUITE_HELP = (
    "Categories judged on every pairing: a built-in code as the seed writes them "
    '(["CBRNE", "SA", "SH"]), or {code, label, rubric} for a category of your own; '
    "empty for every built-in one."
)
CATEGORY_OBJECT = {
    "type": "object",
    "properties": {
        "code": {"type": "string"},
        "label": {"type": "string"},
        "rubric": {"type": "string"},
    },
    "required": ["code"],
}


@extend_schema_field({"oneOf": [{"type": "string"}, CATEGORY_OBJECT]})
class SuiteItemField(serializers.JSONField):
    """A built-in category's code or a category object; the services check which."""


class JudgeCategorySerializer(serializers.Serializer):
    code = serializers.CharField()
    label = serializers.CharField()
    rubric = serializers.CharField()
    built_in = serializers.BooleanField()


class RedBlueChallengeInputSerializer(StrictSerializer):
    workspace = serializers.CharField(
        required=False, help_text="Workspace id or slug; needed when you belong to several."
    )
    app_id = serializers.CharField(max_length=64, required=False, allow_blank=True)
    workflow_id = serializers.CharField(max_length=64, required=False, allow_blank=True)
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, max_length=20000)
    judge_suite = serializers.ListField(
        child=SuiteItemField(), required=False, max_length=50, help_text=SUITE_HELP
    )
    # Plain text checked by the services: choice fields sharing one choice set under several
    # names (or clashing with the challenges' own) would muddle the OpenAPI schema's enums.
    defense_selection_policy = serializers.CharField(
        max_length=24, required=False, help_text=POLICY_HELP
    )
    attack_selection_policy = serializers.CharField(
        max_length=24, required=False, help_text=POLICY_HELP
    )
    scoring_strategy = serializers.CharField(
        max_length=20, required=False, help_text="red_blue_ratio or custom"
    )
    scoring_plugin_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
    scoring_entrypoint = serializers.CharField(required=False, allow_blank=True, max_length=300)
    scoring_config = serializers.DictField(required=False)
    theme = serializers.DictField(required=False)
    instructions_md = serializers.CharField(required=False, allow_blank=True, max_length=100000)
    is_active = serializers.BooleanField(required=False)
    target = serializers.CharField(max_length=10, required=False, help_text="offline or openai")
    target_model = serializers.CharField(required=False, allow_blank=True, max_length=200)
    judge_config = serializers.DictField(required=False)
    judge_panel = serializers.DictField(
        required=False,
        help_text="Several judges per category (SPEC §10): {judges, rule, review, "
        "review_margin}; {} for the one judge of judge_config. A disagreeing panel sends the "
        "pairing to the review queue.",
    )
    time_penalty_per_second = serializers.DecimalField(
        max_digits=8, decimal_places=3, min_value=0, required=False
    )
    token_penalty_per_1k = serializers.DecimalField(
        max_digits=8, decimal_places=3, min_value=0, required=False
    )
    pair_cooldown_seconds = serializers.IntegerField(min_value=0, max_value=604800, required=False)
    banned_terms = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, max_length=100
    )
    sample_defense = serializers.CharField(
        required=False, allow_blank=True, max_length=PROMPT_MAX_CHARS, trim_whitespace=False
    )
    max_submissions_per_hour = serializers.IntegerField(
        min_value=0, max_value=100000, required=False
    )
    transcripts_published = serializers.BooleanField(
        required=False,
        help_text="Once the challenge is closed: every attack, defence and reply readable by "
        "anyone at /web/api/red-blue-challenges/{id}/transcripts.",
    )
    agent = serializers.DictField(
        required=False,
        allow_null=True,
        help_text="An agent scenario (SPEC §9's shape; docs/redblue.md, 'Agent scenarios'): "
        "Blue writes the agent's system prompt and defences, Red the slots' texts, and the "
        "win rule judges each pairing. null: a text challenge.",
    )


class RedBlueChallengeOutputSerializer(serializers.ModelSerializer):
    workspace = serializers.UUIDField(source="workspace_id")
    defense_selection_policy = serializers.CharField(help_text=POLICY_HELP)
    attack_selection_policy = serializers.CharField(help_text=POLICY_HELP)
    scoring_strategy = serializers.CharField()
    target = serializers.CharField()
    created_by = serializers.IntegerField(source="created_by_id", allow_null=True)
    updated_by = serializers.IntegerField(source="updated_by_id", allow_null=True)
    time_penalty_per_second = serializers.FloatField()
    token_penalty_per_1k = serializers.FloatField()
    judge_suite = serializers.ListField(child=SuiteItemField(), help_text=SUITE_HELP)
    judge_categories = serializers.SerializerMethodField(
        help_text="The suite resolved: every category judged, with its label and rubric."
    )

    class Meta:
        model = RedBlueChallenge
        fields = [
            "id",
            "workspace",
            *RED_BLUE_FIELDS,
            "judge_categories",
            "created_by",
            "created_at",
            "updated_by",
            "updated_at",
        ]

    @extend_schema_field(JudgeCategorySerializer(many=True))
    def get_judge_categories(self, challenge) -> list[dict]:
        return [
            {**item, "built_in": builtin_category(item["code"]) == item}
            for item in effective_suite(challenge.judge_suite)
        ]


class SubmissionBriefSerializer(serializers.ModelSerializer):
    end_user = serializers.UUIDField(source="end_user_id", allow_null=True)
    player = serializers.SerializerMethodField()
    prompt = serializers.CharField(
        allow_null=True, help_text="null where the caller may not read it (a defence, to Red)"
    )
    slots = serializers.DictField(
        child=serializers.CharField(allow_blank=True),
        allow_null=True,
        help_text="An agent scenario's attack: the text of each slot (null otherwise)",
    )
    defences = serializers.ListField(
        child=serializers.DictField(),
        allow_null=True,
        help_text="An agent scenario's defence layers; null where the caller may not read it",
    )

    class Meta:
        model = TeamSubmission
        fields = [
            "id",
            "team",
            "end_user",
            "player",
            "prompt",
            "slots",
            "defences",
            "active",
            "status",
            "created_at",
        ]

    def get_player(self, submission) -> str | None:
        return submission.end_user.public_name if submission.end_user else None


class PairingSerializer(serializers.ModelSerializer):
    """A pairing whole: as its creator sees it (console), and anyone once published."""

    attack_submission = SubmissionBriefSerializer()
    defense_submission = SubmissionBriefSerializer()
    red_points = serializers.FloatField()
    blue_points = serializers.FloatField()
    category_results = serializers.SerializerMethodField()
    trace = serializers.JSONField(
        allow_null=True,
        help_text="An agent scenario's run: {steps, final_answer, stop_reason, won, why}; "
        "to Red, a call the defence refused reads refused_by 'defence' and no reason",
    )

    class Meta:
        model = TeamPairing
        fields = [
            "id",
            "status",
            "attack_submission",
            "defense_submission",
            "response",
            "categories",
            "category_results",
            "judge_rating",
            "judge_feedback",
            "red_points",
            "blue_points",
            "tokens_total",
            "elapsed_ms",
            "trace",
            "created_at",
            "completed_at",
        ]

    def get_category_results(self, pairing) -> dict:
        raw = pairing.judge_output_raw or {}
        return raw.get("categories") or {}


class PlayerPairingSerializer(PairingSerializer):
    """A pairing as one of its players sees it; context `end_user_id` is that player."""

    def to_representation(self, pairing):
        data = super().to_representation(pairing)
        readable = pairing_texts_readable(pairing=pairing, end_user_id=self.context["end_user_id"])
        for side in (ATTACK, DEFENSE):
            if data.get(side) and side not in readable:
                data[side]["prompt"] = None
                data[side]["slots"] = None
                data[side]["defences"] = None
        if DEFENSE not in readable:
            data["trace"] = trace_for_red(data.get("trace"))
        return data


class JoinInputSerializer(StrictSerializer):
    team = serializers.ChoiceField(Team.choices)


class JoinOutputSerializer(serializers.Serializer):
    red_blue_challenge_id = serializers.UUIDField()
    team = serializers.ChoiceField(Team.choices)
    end_user_id = serializers.UUIDField()
    joined_at = serializers.DateTimeField()


class SubmitInputSerializer(StrictSerializer):
    team = serializers.ChoiceField(Team.choices)
    prompt = serializers.CharField(
        max_length=PROMPT_MAX_CHARS,
        trim_whitespace=False,
        required=False,
        allow_blank=True,
        help_text="The attack or the defence; on an agent scenario, Blue's system prompt "
        "for the agent (omitted: the scenario's own), and Red sends slots instead",
    )
    system_prompt = serializers.CharField(
        max_length=PROMPT_MAX_CHARS,
        trim_whitespace=False,
        required=False,
        allow_blank=True,
        help_text="Agent scenarios: Blue's system prompt (another name for prompt)",
    )
    slots = serializers.JSONField(
        required=False, help_text="Agent scenarios, Red: {<slot name>: text}"
    )
    defences = serializers.JSONField(
        required=False,
        help_text="Agent scenarios, Blue: defence layers as agent challenges take them "
        "(tool_guard, spotlight, llm_tool_check, max_tool_calls)",
    )

    def validate(self, data: dict) -> dict:
        if "system_prompt" in data:
            if data.get("prompt"):
                raise serializers.ValidationError(
                    {"system_prompt": ["Send prompt or system_prompt, not both."]}
                )
            data["prompt"] = data.pop("system_prompt")
        return data


class SelfTestInputSerializer(StrictSerializer):
    prompt = serializers.CharField(max_length=PROMPT_MAX_CHARS, trim_whitespace=False)
    defense = serializers.CharField(
        max_length=PROMPT_MAX_CHARS, trim_whitespace=False, required=False, allow_blank=True
    )


class RedBlueBenignTaskSerializer(serializers.Serializer):
    task = serializers.CharField()


class RedBlueAgentSerializer(serializers.Serializer):
    """What both sides see of a red/blue agent scenario: Blue's starting system prompt, the
    goal Red plays for and the benign tasks Blue must keep working (never the tools'
    `returns` templates)."""

    system_prompt = serializers.CharField(allow_blank=True, help_text="Blue's default")
    task = serializers.CharField()
    tools = PublicAgentToolSerializer(many=True)
    slots = PublicAgentSlotSerializer(many=True)
    win = serializers.DictField()
    benign_tasks = RedBlueBenignTaskSerializer(many=True)
    max_steps = serializers.IntegerField()


class PublicRedBlueChallengeSerializer(serializers.ModelSerializer):
    judge_suite = serializers.SerializerMethodField()
    agent = serializers.SerializerMethodField()
    defense_selection_policy = serializers.CharField(help_text=POLICY_HELP)
    attack_selection_policy = serializers.CharField(help_text=POLICY_HELP)
    scoring_strategy = serializers.CharField()
    has_sample_defense = serializers.SerializerMethodField()

    class Meta:
        model = RedBlueChallenge
        fields = [
            "id",
            "name",
            "description",
            "instructions_md",
            "theme",
            "agent",
            "judge_suite",
            "defense_selection_policy",
            "attack_selection_policy",
            "scoring_strategy",
            "pair_cooldown_seconds",
            "has_sample_defense",
            "created_at",
        ]

    def get_judge_suite(self, challenge) -> list:
        return [
            {"code": item["code"], "label": item.get("label", "")}
            for item in effective_suite(challenge.judge_suite)
        ]

    @extend_schema_field(RedBlueAgentSerializer(allow_null=True))
    def get_agent(self, challenge) -> dict | None:
        return RedBlueAgentSerializer(challenge.agent).data if challenge.agent else None

    def get_has_sample_defense(self, challenge) -> bool:
        return bool(challenge.sample_defense.strip())


class SelfTestOutputSerializer(serializers.Serializer):
    against = serializers.CharField()
    scored = serializers.BooleanField()
    response = serializers.CharField()
    judge_passed = serializers.BooleanField()
    judge_rating = serializers.IntegerField(allow_null=True)
    judge_feedback = serializers.CharField()
    categories = serializers.DictField(child=serializers.BooleanField())
    category_results = serializers.DictField()
    labels = serializers.DictField(child=serializers.CharField())


class RegressionFailureSerializer(serializers.Serializer):
    attack_submission_id = serializers.UUIDField()
    prompt = serializers.CharField(help_text="The attack (a defender reads attacks on them).")
    categories = serializers.ListField(child=serializers.CharField())
    judge_rating = serializers.IntegerField(allow_null=True)
    response = serializers.CharField(allow_blank=True)
    slots = serializers.DictField(required=False, help_text="Agent scenarios: the attack")
    trace = serializers.DictField(required=False, help_text="Agent scenarios: the run")


class BenignTaskResultSerializer(serializers.Serializer):
    task = serializers.CharField()
    passed = serializers.BooleanField()


class BenignReportSerializer(serializers.Serializer):
    passed = serializers.IntegerField()
    total = serializers.IntegerField()
    tasks = BenignTaskResultSerializer(many=True)


class RegressionReportSerializer(serializers.Serializer):
    checked = serializers.IntegerField(help_text="How many attacks of the set were run.")
    passed = serializers.BooleanField()
    failures = RegressionFailureSerializer(many=True)
    error = serializers.CharField(required=False, help_text="target_unavailable")
    superseded = serializers.BooleanField(required=False)


STATUS_HELP = (
    "paired or waiting; a defence sent while the challenge has a regression set is "
    "checking until it is run against it, then rejected (an attack still breaks it) or "
    "paired/waiting like any other"
)


class SubmitOutputSerializer(serializers.Serializer):
    submission_id = serializers.UUIDField()
    team = serializers.CharField()
    status = serializers.CharField(help_text=STATUS_HELP)
    waiting = serializers.BooleanField()
    fell_back = serializers.BooleanField()
    regression = RegressionReportSerializer(
        allow_null=True, help_text="A defence's run against the regression set, once done."
    )
    benign = BenignReportSerializer(
        allow_null=True,
        help_text="Agent scenarios: the benign tasks this defence passes (scales Blue's points)",
    )
    pairings = PlayerPairingSerializer(many=True)


class SubmissionStatusSerializer(serializers.Serializer):
    submission_id = serializers.UUIDField()
    team = serializers.CharField()
    status = serializers.CharField(help_text=STATUS_HELP)
    active = serializers.BooleanField()
    regression = RegressionReportSerializer(allow_null=True)
    benign = BenignReportSerializer(allow_null=True)
    pairings = PlayerPairingSerializer(many=True)


class RegressionAttackSerializer(serializers.Serializer):
    """A break in the challenge's regression set, as its creator reads it."""

    id = serializers.UUIDField()
    attack_submission_id = serializers.UUIDField()
    player = serializers.SerializerMethodField()
    prompt = serializers.CharField(source="attack_submission.prompt")
    pairing_id = serializers.UUIDField()
    categories = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()

    def get_player(self, row) -> str | None:
        end_user = row.attack_submission.end_user
        return end_user.public_name if end_user else None
