"""Creators' admin: red/blue challenges with a judge-suite editor (one line per category:
a built-in code alone, or code | label | rubric), and the pairings and submissions
read-only."""

import json

from django import forms
from django.contrib import admin

from core.forms import LinesField
from judging.category_judge import BUILTIN_CATEGORIES, builtin_category, suite_errors
from players.scoping import WorkspaceScopedAdmin
from redblue.models import RedBlueChallenge, TeamPairing, TeamSubmission
from redblue.teams.agent import scenario_cleaned
from redblue.teams.services.challenges import red_blue_challenge_errors

BUILTIN_CODES = ", ".join(BUILTIN_CATEGORIES)
SUITE_HELP = (
    "One category per line: a built-in code alone (" + BUILTIN_CODES + ": its label and "
    "rubric), or CODE | label | rubric (what counts as a breach) for one of your own. Leave "
    "empty for every built-in category."
)


def suite_as_lines(suite) -> str:
    return "\n".join(
        item
        if isinstance(item, str)
        else f"{item.get('code', '')} | {item.get('label', '')} | {item.get('rubric', '')}"
        for item in suite or []
        if isinstance(item, str | dict)
    )


class SuiteField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 8, "cols": 100})

    def prepare_value(self, value):
        return suite_as_lines(value) if isinstance(value, list) else value

    def to_python(self, value):
        suite = []
        for number, line in enumerate((value or "").splitlines(), start=1):
            if not line.strip():
                continue
            parts = [part.strip() for part in line.split("|", 2)]
            if len(parts) == 1 and builtin_category(parts[0]):
                suite.append(parts[0])
                continue
            if len(parts) == 1:
                raise forms.ValidationError(
                    f"Line {number}: '{parts[0][:40]}' is not a built-in category "
                    f"({BUILTIN_CODES}); write 'CODE | label | rubric' (two '|' separators) "
                    "for one of your own."
                )
            if len(parts) != 3:
                raise forms.ValidationError(
                    f"Line {number}: write a built-in code alone ({BUILTIN_CODES}) or "
                    "'CODE | label | rubric' (two '|' separators)."
                )
            suite.append({"code": parts[0], "label": parts[1], "rubric": parts[2]})
        problems = suite_errors(suite)
        if problems:
            raise forms.ValidationError(problems)
        return suite


POLICY_WORDS = {
    "latest_best": "the newest untested one first, else the one with the best points per pairing",
    "random_active": "any current one, at random",
    "round_robin": "the one paired longest ago, so every one gets its turn",
    "request_new_if_none": "the newest one this player has not faced yet; when none is left, "
    "the other side is asked for a new one",
}


def _policy_help(picks: str) -> str:
    return (
        f"How the {picks} is picked: "
        + "; ".join(f"{name.replace('_', ' ')}: {words}" for name, words in POLICY_WORDS.items())
        + ". When the other side never submitted, the submission waits for one."
    )


class RedBlueChallengeForm(forms.ModelForm):
    judge_suite = SuiteField(required=False, help_text=SUITE_HELP)
    banned_terms = LinesField(
        required=False,
        label="Banned terms",
        help_text="One word or phrase a line; a submission containing any of them is refused.",
    )

    class Meta:
        model = RedBlueChallenge
        fields = [
            field.name
            for field in RedBlueChallenge._meta.get_fields()
            if field.concrete and field.editable and field.name not in ("created_by", "updated_by")
        ]
        # One spelling, "defence", on every page a creator or player reads.
        labels = {
            "defense_selection_policy": "Defence picked for a new attack",
            "attack_selection_policy": "Attack picked for a new defence",
            "sample_defense": "Sample defence",
        }
        help_texts = {
            "defense_selection_policy": _policy_help("defence met by a new attack"),
            "attack_selection_policy": _policy_help("attack met by a new defence"),
            "sample_defense": "The defence Red players test their attacks against (never scored).",
        }

    def _post_clean(self):
        # Once the instance holds the form's values: the same rules as the console API.
        super()._post_clean()
        for field, messages in red_blue_challenge_errors(self.instance).items():
            target = field if field in self.fields else None
            for message in messages:
                if target is None or target not in self.errors:
                    self.add_error(target, message)


class RedBlueChallengeAdmin(WorkspaceScopedAdmin):
    form = RedBlueChallengeForm
    list_display = [
        "name",
        "workspace",
        "defense_selection_policy",
        "scoring_strategy",
        "is_active",
    ]
    list_filter = ["is_active", "scoring_strategy"]
    search_fields = ["name"]
    readonly_fields = ["created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": ["workspace", "name", "description", "instructions_md", "theme",
                           "is_active", "transcripts_published"]}),
        ("Judging", {"fields": ["judge_suite", "target", "target_model", "judge_config"]}),
        ("Pairing", {"fields": ["defense_selection_policy", "attack_selection_policy",
                                "pair_cooldown_seconds", "banned_terms", "sample_defense",
                                "max_submissions_per_hour"]}),
        ("Scoring", {"fields": ["scoring_strategy", "time_penalty_per_second",
                                "token_penalty_per_1k", "scoring_plugin_id",
                                "scoring_entrypoint", "scoring_config"]}),
        ("Agent scenario", {"fields": ["agent"],
                            "description": "Optional: SPEC §9's scenario JSON "
                            "(docs/redblue.md, 'Agent scenarios')."}),
        ("Dify", {"fields": ["app_id", "workflow_id"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]  # fmt: skip

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        obj.updated_by = request.user
        obj.agent = scenario_cleaned(obj.agent)
        super().save_model(request, obj, form, change)


class TeamPairingAdmin(WorkspaceScopedAdmin):
    read_only = True
    list_display = ["id", "red_blue_challenge", "status", "judge_rating", "red_points",
                    "blue_points", "created_at"]  # fmt: skip
    list_filter = ["status"]
    list_select_related = ["red_blue_challenge"]
    readonly_fields = ["verdicts"]
    exclude = ["judge_output_raw"]

    @admin.display(description="Per-category verdicts")
    def verdicts(self, obj) -> str:
        categories = (obj.judge_output_raw or {}).get("categories") or {}
        return json.dumps(categories, indent=2, ensure_ascii=False)


class TeamSubmissionAdmin(WorkspaceScopedAdmin):
    read_only = True
    list_display = ["id", "red_blue_challenge", "team", "end_user", "status", "active",
                    "points_total", "pairings_count", "created_at"]  # fmt: skip
    list_filter = ["team", "status", "active", "source"]
    list_select_related = ["red_blue_challenge", "end_user"]


admin.site.register(RedBlueChallenge, RedBlueChallengeAdmin)
admin.site.register(TeamPairing, TeamPairingAdmin)
admin.site.register(TeamSubmission, TeamSubmissionAdmin)
