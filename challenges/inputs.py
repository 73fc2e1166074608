"""Input shapes a creator's writes take both through the console API and in an event file
(redblue/porting/): one definition for both, so an import checks a row as the console does."""

from rest_framework import serializers

from challenges.models import Bounty, Challenge, ChallengeCollection
from challenges.services.hints import HINT_BODY_MAX_CHARS, HINT_COST_MAX, HINT_ORDER_MAX
from challenges.targets import MAX_TARGETS, TargetEntrySerializer
from core.api import StrictSerializer
from players.inputs import BudgetSerializer


class BountyInputSerializer(StrictSerializer):
    challenge = serializers.CharField(help_text="The challenge's id")
    codename = serializers.CharField(
        max_length=40,
        required=False,
        allow_blank=True,
        help_text="Several targets: only breaks of this codename earn it",
    )
    kind = serializers.ChoiceField(Bounty.Kind.values)
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.RegexField(
        r"^[A-Z]{3}$", required=False, help_text="ISO 4217 code, USD when left out"
    )
    cap = serializers.DecimalField(
        max_digits=14,
        decimal_places=2,
        required=False,
        allow_null=True,
        help_text="per_break: the most paid in total; fastest_n: how many winners",
    )


class WaveInputSerializer(StrictSerializer):
    workspace = serializers.CharField(
        required=False, help_text="Workspace id or slug; needed when you belong to several."
    )
    name = serializers.CharField(max_length=120)
    challenges = serializers.ListField(
        child=serializers.CharField(max_length=64), help_text="Challenge ids", max_length=200
    )
    opens_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField()


class ChallengeInputSerializer(StrictSerializer):
    workspace = serializers.CharField(
        required=False, help_text="Workspace id or slug; needed when you belong to several."
    )
    app_id = serializers.CharField(max_length=64, required=False, allow_blank=True)
    workflow_id = serializers.CharField(max_length=64, required=False, allow_blank=True)
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=80, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True, max_length=20000)
    goal = serializers.CharField(required=False, allow_blank=True, max_length=20000)
    instructions_md = serializers.CharField(required=False, allow_blank=True, max_length=100000)
    theme = serializers.DictField(required=False)
    success_type = serializers.ChoiceField(Challenge.SuccessType.choices, required=False)
    success_pattern = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    secret_ref = serializers.CharField(required=False, allow_blank=True, max_length=100)
    answer_mode = serializers.ChoiceField(Challenge.AnswerMode.choices, required=False)
    secret_per_player = serializers.BooleanField(required=False)
    secret_words = serializers.CharField(required=False, allow_blank=True, max_length=20000)
    defences = serializers.ListField(child=serializers.DictField(), required=False, max_length=20)
    scoring_strategy = serializers.ChoiceField(Challenge.Strategy.choices, required=False)
    is_active = serializers.BooleanField(required=False)
    system_prompt = serializers.CharField(required=False, allow_blank=True, max_length=50000)
    target = serializers.ChoiceField(Challenge.Target.choices, required=False)
    target_model = serializers.CharField(required=False, allow_blank=True, max_length=200)
    target_config = serializers.DictField(required=False)
    evaluator_type = serializers.ChoiceField(Challenge.EvaluatorType.choices, required=False)
    judge_config = serializers.DictField(required=False)
    judge_panel = serializers.DictField(
        required=False,
        help_text="{judges: [judge_config…], rule: all|majority|any, "
        "review: disagreement|margin|never, review_margin} (SPEC §10); {} for one judge",
    )
    evaluator_plugin_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
    evaluator_entrypoint = serializers.CharField(required=False, allow_blank=True, max_length=300)
    evaluator_config = serializers.DictField(required=False)
    scoring_plugin_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
    scoring_entrypoint = serializers.CharField(required=False, allow_blank=True, max_length=300)
    scoring_config = serializers.DictField(required=False)
    max_attempts_per_hour = serializers.IntegerField(required=False, min_value=0, max_value=100000)
    starts_at = serializers.DateTimeField(required=False, allow_null=True)
    ends_at = serializers.DateTimeField(required=False, allow_null=True)
    mask_variables = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, max_length=100
    )
    keep_failed_prompts = serializers.BooleanField(required=False)
    mode = serializers.ChoiceField(Challenge.Mode.choices, required=False)
    max_turns = serializers.IntegerField(required=False, min_value=1, max_value=100)
    judge_scope = serializers.ChoiceField(Challenge.JudgeScope.choices, required=False)
    session_token_budget = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=2_000_000_000
    )
    agent = serializers.DictField(
        required=False,
        help_text="mode agent (SPEC §9): {system_prompt, task, tools: [{name, description, "
        "parameters, returns}], slots: [{name, kind, template}], win: {tool, args, conceal}, "
        "benign_tasks: [{task, expect}], max_steps, token_budget}",
    )
    targets = TargetEntrySerializer(
        many=True,
        required=False,
        max_length=MAX_TARGETS,
        help_text="Several anonymised targets (SPEC §9); empty: the target above is the only one.",
    )
    target_assignment = serializers.ChoiceField(Challenge.TargetAssignment.choices, required=False)
    reveal_targets = serializers.BooleanField(required=False)
    copy_policy = serializers.ChoiceField(
        Challenge.CopyPolicy.choices,
        required=False,
        help_text="A win whose prompt is a near-copy of another player's earlier win: "
        "off (nothing), flag (recorded with near_copy_of) or refuse (409 near_copy).",
    )
    copy_threshold = serializers.FloatField(
        required=False,
        help_text="pg_trgm similarity, above 0 and up to 1, from which a prompt is a near-copy.",
    )
    budget = BudgetSerializer(
        required=False, allow_null=True, help_text="All players together; null removes it"
    )
    player_budget = BudgetSerializer(
        required=False, allow_null=True, help_text="Each player; null removes it"
    )
    fallback_target = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Played when a budget is spent: 'offline' or 'openai/<model>'; empty pauses",
    )


# A challenge's budget inputs (docs/budgets.md): the spending decisions of the site that runs
# it, at its own prices, so an event file (redblue/porting) carries none of them.
BUDGET_INPUTS = frozenset({"budget", "player_budget", "fallback_target"})


def budget_fields(fields: dict) -> dict:
    """The validated input with `budget` and `player_budget` as the challenge's columns."""
    for name, prefix in (("budget", "budget_"), ("player_budget", "player_budget_")):
        if name in fields:
            given = fields.pop(name) or {}
            fields[prefix + "tokens"] = given.get("tokens")
            fields[prefix + "cost"] = given.get("cost")
    return fields


class CollectionInputSerializer(StrictSerializer):
    workspace = serializers.CharField(
        required=False, help_text="Workspace id or slug; needed when you belong to several."
    )
    app_id = serializers.CharField(max_length=64, required=False, allow_blank=True)
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=80, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True, max_length=20000)
    instructions_md = serializers.CharField(required=False, allow_blank=True, max_length=100000)
    theme = serializers.DictField(required=False)
    is_public = serializers.BooleanField(required=False)
    in_order = serializers.BooleanField(required=False)
    scoring_strategy = serializers.ChoiceField(ChallengeCollection.Strategy.choices, required=False)
    scoring_plugin_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
    scoring_entrypoint = serializers.CharField(required=False, allow_blank=True, max_length=300)
    scoring_config = serializers.DictField(required=False)


class HintInputSerializer(StrictSerializer):
    order = serializers.IntegerField(min_value=0, max_value=HINT_ORDER_MAX, required=False)
    body_md = serializers.CharField(max_length=HINT_BODY_MAX_CHARS, trim_whitespace=False)
    cost = serializers.IntegerField(min_value=0, max_value=HINT_COST_MAX, required=False)
