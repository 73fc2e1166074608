"""Admin forms: they check input with the rules in challenges.validation, never write."""

import re
from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.validators import RegexValidator
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet

from challenges.admin_agent import (
    AgentRows,
    agent_fits_rows,
    agent_form_fields,
    agent_initial,
    is_agent_layer,
    placeholder_help,
)
from challenges.models import Bounty, BridgeKey, Challenge, ChallengeCollection, Secret, Wave
from challenges.services.bounties import bounty_check
from challenges.services.challenges import BUDGET_FIELDS, CHALLENGE_FIELDS
from challenges.services.collections import COLLECTION_FIELDS, collection_errors
from challenges.services.hints import HINT_FIELDS, hint_errors
from challenges.services.prerequisites import prerequisite_errors
from challenges.services.waves import wave_check
from challenges.validation import challenge_errors
from core.errors import ApplicationError
from core.forms import LinesField
from core.parsers import CheckedJSONDecoder, JsonBodyError, json_loads

# Form field -> key of Challenge.judge_config.
JUDGE_FIELDS = {
    "judge_model": "judge_model",
    "judge_temperature": "temperature",
    "judge_max_tokens": "max_tokens",
    "judge_rubric_prompt_template": "rubric_prompt_template",
    "judge_rating_scale": "rating_scale",
    "judge_pass_threshold": "pass_threshold",
}
_JSON_EMPTY: dict[str, Any] = {
    "theme": dict,
    "target_config": dict,
    "evaluator_config": dict,
    "scoring_config": dict,
    "mask_variables": list,
    "agent": dict,
}


def _whole(number: float | None) -> float | int | None:
    if isinstance(number, float) and number.is_integer():
        return int(number)
    return number


class ExplainedJSONField(forms.JSONField):
    """A JSON box that says where the JSON breaks and which shape it needs."""

    def __init__(self, *args: Any, expected: type = dict, **kwargs: Any) -> None:
        self.expected = expected
        # The API's limits (no NUL, no deep nesting) hold for JSON typed into the admin too.
        kwargs.setdefault("decoder", CheckedJSONDecoder)
        super().__init__(*args, **kwargs)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str) and value.strip():
            try:
                json_loads(value)
            except JsonBodyError as exc:
                raise forms.ValidationError(str(exc), code="invalid") from None
        converted = super().to_python(value)
        if converted is not None and not isinstance(converted, self.expected):
            shape = "an object, {…}" if self.expected is dict else "a list, […]"
            raise forms.ValidationError(f"This must be {shape}.", code="invalid")
        return converted


_SECRET_NAME = RegexValidator(
    re.compile(r"^[A-Za-z0-9_.-]{1,100}$"), "Use 1–100 letters, digits, '_', '-' or '.'."
)


_JSON_WIDGET = forms.Textarea(attrs={"rows": 3, "class": "vLargeTextField json-field"})

# Help for every Dify and JSON term a creator meets on the form.
CHALLENGE_HELP = {
    "agent": "The whole scenario as JSON {system_prompt, task, tools, slots, win, "
    "benign_tasks, max_steps, token_budget} (docs/agents.md). Edit it here only for what the "
    "rows above cannot say: when you change this box, it replaces what the rows say.",
    "app_id": "The id of the Dify app that plays this challenge (Dify → Studio → the app → "
    "its URL, /app/<id>/…). The Dify bridge accepts calls for this challenge only with it.",
    "workflow_id": "The id of the Dify workflow inside that app, if you run one; left "
    "blank, any workflow of the app may report attempts.",
    "target": "offline: the built-in model, no network. openai: an OpenAI-compatible "
    "endpoint (OPENAI_BASE_URL). dify: a Dify app, called with the app key named in "
    "the advanced target settings.",
    "target_model": "The model name for the openai target, e.g. gpt-4o-mini.",
    "target_config": 'JSON object. For dify: {"base_url": "https://dify.example/v1", '
    '"app_key_secret": "<name of a secret holding the Dify app key>"}. For openai: '
    'extra model parameters such as {"temperature": 0.7}.',
    "mask_variables": "JSON list of names of Dify variables whose values are masked "
    'wherever they would be shown or stored, e.g. ["password"].',
    "evaluator_config": "JSON object handed to the evaluator plugin.",
    "scoring_config": "JSON object handed to the scoring plugin.",
    "evaluator_plugin_id": "The name of an installed evaluator plugin "
    "(entry-point group prompt_challenges.evaluators).",
    "scoring_plugin_id": "The name of an installed scoring plugin "
    "(entry-point group prompt_challenges.scorers).",
    "evaluator_type": "rules: the reply must match a pattern. llm-judge: a judge model rates "
    "the reply. custom: an installed plugin decides.",
    "scoring_strategy": "How the leaderboard ranks players who solved it.",
}


# Each layer kind the form edits and the keys of it typed in (SPEC §4c `defences`).
DEFENCE_EDITOR = {
    "input_filter": ("terms", "pattern", "message"),
    "output_guard": ("message",),
    "llm_check": ("message",),
}
DEFENCE_EDITOR_FIELDS = (
    "input_filter_on",
    "input_filter_terms",
    "input_filter_pattern",
    "input_filter_message",
    "output_guard_on",
    "output_guard_message",
    "llm_check_on",
    "llm_check_message",
    "llm_check_judge_model",
)


# Several anonymised targets (SPEC §9): one row of fields per target, no JSON to write.
TARGET_ROWS = 6
TARGET_ROW_KEYS = ("codename", "target", "target_model", "base_url", "app_key_secret")
TARGET_EDITOR_FIELDS = tuple(
    tuple(f"target_{row}_{key}" for key in TARGET_ROW_KEYS) for row in range(1, TARGET_ROWS + 1)
)


def _target_row_fields() -> dict[str, forms.Field]:
    fields: dict[str, forms.Field] = {}
    for row in range(1, TARGET_ROWS + 1):
        fields[f"target_{row}_codename"] = forms.CharField(
            required=False,
            max_length=40,
            label=f"Target {row}: codename",
            help_text="What players see, e.g. Model Teal. Leave blank for no target here."
            if row == 1
            else "",
        )
        fields[f"target_{row}_target"] = forms.ChoiceField(
            required=False, choices=Challenge.Target.choices, label="Kind"
        )
        fields[f"target_{row}_target_model"] = forms.CharField(
            required=False, max_length=200, label="Model", help_text="Only creators see it."
        )
        fields[f"target_{row}_base_url"] = forms.CharField(
            required=False, max_length=500, label="Dify base URL"
        )
        fields[f"target_{row}_app_key_secret"] = forms.CharField(
            required=False, max_length=100, label="Dify app key secret"
        )
    return fields


class ChallengeAdminForm(forms.ModelForm):
    # Set by the ModelAdmin for each request: the workspaces the creator may write to.
    writable_workspaces: QuerySet | None = None
    # Whether the scenario was built from the agent editor's rows (not the JSON box), and
    # where its layers start in `defences`: where the checks' messages go.
    _agent_by_rows = False
    _agent_layers_from = 0

    theme = ExplainedJSONField(required=False, widget=_JSON_WIDGET)
    target_config = ExplainedJSONField(required=False, widget=_JSON_WIDGET, label="Target settings")
    evaluator_config = ExplainedJSONField(required=False, widget=_JSON_WIDGET)
    scoring_config = ExplainedJSONField(required=False, widget=_JSON_WIDGET)
    mask_variables = ExplainedJSONField(required=False, widget=_JSON_WIDGET, expected=list)
    # The defence layers, one small editor each (SPEC §4c); the console API takes any list.
    input_filter_on = forms.BooleanField(
        required=False,
        label="Input filter",
        help_text="Refuse a prompt before the model sees it when it holds one of the terms "
        "(or matches the pattern).",
    )
    input_filter_terms = LinesField(
        required=False, label="Terms", help_text="One word or phrase a line, any case."
    )
    input_filter_pattern = forms.CharField(
        required=False, label="Or a pattern", help_text="An RE2 regular expression."
    )
    input_filter_message = forms.CharField(
        required=False, label="What the filter says", help_text="Shown instead of a reply."
    )
    output_guard_on = forms.BooleanField(
        required=False,
        label="Output guard",
        help_text="Stop a reply that holds the secret plain, spaced, dashed, reversed, in any "
        "case or in base64. With it on, only guess mode can be won.",
    )
    output_guard_message = forms.CharField(
        required=False, label="What the guard says", help_text="Shown instead of the reply."
    )
    llm_check_on = forms.BooleanField(
        required=False,
        label="Reviewer (LLM check)",
        help_text="A judge model reads each reply and stops one that gives the secret away; a "
        "judge that cannot answer counts as a catch.",
    )
    llm_check_message = forms.CharField(
        required=False, label="What the reviewer says", help_text="Shown instead of the reply."
    )
    llm_check_judge_model = forms.CharField(
        required=False,
        label="Reviewer model",
        help_text="provider/model, e.g. openai/gpt-4o-mini; blank for the offline reviewer.",
    )

    new_secret_name = forms.CharField(
        required=False,
        label="Or a new secret: name",
        help_text="Creates the secret in this workspace when you save, and uses it.",
    )
    new_secret_value = forms.CharField(
        required=False,
        strip=False,
        label="Value",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Write-only: it is never shown again.",
    )

    secret_ref = forms.ChoiceField(
        required=False,
        label="Secret",
        help_text="The secret that {{secret}} stands for in the success pattern and system "
        "prompt. Its value is filled in on the server and never shown.",
    )
    judge_model = forms.CharField(
        required=False,
        label="Judge model",
        help_text="provider/model, e.g. openai/gpt-4o-mini (uses the configured "
        "OpenAI-compatible endpoint) or offline/judge.",
    )
    judge_temperature = forms.FloatField(
        required=False, min_value=0, max_value=2, label="Temperature"
    )
    judge_max_tokens = forms.IntegerField(
        required=False, min_value=1, max_value=32000, label="Max tokens"
    )
    judge_rubric_prompt_template = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        label="Rubric prompt template",
        help_text="Placeholders: {goal}, {response}, {hints}.",
    )
    panel_judge_models = forms.CharField(
        required=False,
        label="Panel judges",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One judge model a line (2 to 5), e.g. openai/gpt-4o-mini; each uses the "
        "judge settings above. Blank: the one judge above decides.",
    )
    panel_rule = forms.ChoiceField(
        required=False,
        label="Verdict by",
        choices=[
            ("majority", "majority of judges"),
            ("all", "all judges"),
            ("any", "any judge"),
        ],
    )
    panel_review = forms.ChoiceField(
        required=False,
        label="Send to review",
        choices=[
            ("disagreement", "when the judges disagree"),
            ("margin", "when a rating is within the margin of the threshold"),
            ("never", "never"),
        ],
    )
    panel_review_margin = forms.FloatField(
        required=False, min_value=0, max_value=100, label="Margin", initial=0
    )
    judge_rating_scale = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=100,
        label="Rating scale",
        help_text="Ratings run from 0 to this number (default 10).",
    )
    judge_pass_threshold = forms.FloatField(
        required=False,
        min_value=0,
        label="Pass threshold",
        help_text="A rating at or above this passes (default 5).",
    )

    class Meta:
        model = Challenge
        fields = (
            "workspace",
            *(
                name
                for name in CHALLENGE_FIELDS
                if name not in ("judge_config", "judge_panel", "defences", "targets")
            ),
            *BUDGET_FIELDS,
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        config = self.instance.judge_config or {}
        for field_name, key in JUDGE_FIELDS.items():
            if field_name in self.fields and key in config:
                self.fields[field_name].initial = config[key]
        if "slug" in self.fields:
            self.fields["slug"].required = False
            self.fields["slug"].help_text = "Left blank, it is made from the name."
        if "secret_ref" in self.fields:
            self.fields["secret_ref"].choices = self._secret_choices()
        # Forms (and scripts) that predate a setting leave it as it was, or its default.
        for name in (
            "answer_mode",
            "copy_policy",
            "copy_threshold",
            "mode",
            "max_turns",
            "judge_scope",
        ):
            if name in self.fields:
                self.fields[name].required = False
        for name in ("description", "goal", "instructions_md", "system_prompt", "success_pattern"):
            if name in self.fields:
                self.fields[name].widget.attrs["rows"] = 3 if name != "instructions_md" else 6
        for name, help_text in CHALLENGE_HELP.items():
            if name in self.fields:
                self.fields[name].help_text = help_text
        self._show_defences(self.instance.defences or [])
        self._show_targets(self.instance.targets or [])
        if "target_assignment" in self.fields:
            self.fields["target_assignment"].required = False
        self._show_panel(self.instance.judge_panel or {})
        self._show_agent(self.instance.agent or {}, self.instance.defences or [])

    def _show_targets(self, targets: list) -> None:
        for row, entry in enumerate(targets[:TARGET_ROWS], start=1):
            if not isinstance(entry, dict):
                continue
            config = entry.get("target_config") or {}
            shown = {
                **entry,
                **{key: config.get(key, "") for key in ("base_url", "app_key_secret")},
            }
            for key in TARGET_ROW_KEYS:
                name = f"target_{row}_{key}"
                if name in self.fields and shown.get(key):
                    self.fields[name].initial = shown[key]

    def targets(self) -> list[dict[str, Any]]:
        """The rows with a codename, in order. Target settings the rows do not show (set
        through the console API) are kept for the same codename."""
        cleaned = self.cleaned_data
        stored = {
            entry.get("codename"): entry
            for entry in (self.instance.targets or [])
            if isinstance(entry, dict)
        }
        targets = []
        for row in range(1, TARGET_ROWS + 1):
            codename = (cleaned.get(f"target_{row}_codename") or "").strip()
            if not codename:
                continue
            config = dict((stored.get(codename) or {}).get("target_config") or {})
            for key in ("base_url", "app_key_secret"):
                config.pop(key, None)
                if cleaned.get(f"target_{row}_{key}"):
                    config[key] = cleaned[f"target_{row}_{key}"].strip()
            targets.append(
                {
                    "codename": codename,
                    "target": cleaned.get(f"target_{row}_target") or Challenge.Target.OFFLINE,
                    "target_model": (cleaned.get(f"target_{row}_target_model") or "").strip(),
                    "target_config": config,
                }
            )
        return targets

    def clean_target_assignment(self) -> str:
        return (
            self.cleaned_data.get("target_assignment")
            or self.instance.target_assignment
            or Challenge.TargetAssignment.ROUND_ROBIN
        )

    def _show_panel(self, panel: dict) -> None:
        if "panel_judge_models" not in self.fields or not isinstance(panel, dict) or not panel:
            return
        judges = [judge for judge in panel.get("judges") or [] if isinstance(judge, dict)]
        self.fields["panel_judge_models"].initial = "\n".join(
            str(judge.get("judge_model") or "") for judge in judges
        )
        self.fields["panel_rule"].initial = panel.get("rule", "majority")
        self.fields["panel_review"].initial = panel.get("review", "disagreement")
        self.fields["panel_review_margin"].initial = panel.get("review_margin", 0)

    def judge_panel(self) -> dict[str, Any]:
        """The panel the editor describes: each line a judge with the judge settings above
        (a stored judge's own settings are kept while its line is unchanged)."""
        cleaned = self.cleaned_data
        models = [
            line.strip()
            for line in (cleaned.get("panel_judge_models") or "").splitlines()
            if line.strip()
        ]
        if not models:
            return {}
        shared = {key: value for key, value in self.judge_config().items() if key != "judge_model"}
        stored = (self.instance.judge_panel or {}).get("judges") or []
        judges = []
        for index, model in enumerate(models):
            before = stored[index] if index < len(stored) else None
            if isinstance(before, dict) and before.get("judge_model") == model:
                judges.append(before)
            else:
                judges.append({**shared, "judge_model": model})
        margin = cleaned.get("panel_review_margin")
        return {
            "judges": judges,
            "rule": cleaned.get("panel_rule") or "majority",
            "review": cleaned.get("panel_review") or "disagreement",
            "review_margin": _whole(margin) if margin is not None else 0,
        }

    def _show_defences(self, layers: list) -> None:
        """The stored layers in the editor: the first of each kind."""
        for layer in reversed([item for item in layers if isinstance(item, dict)]):
            kind = layer.get("type")
            if f"{kind}_on" not in self.fields:
                continue
            self.fields[f"{kind}_on"].initial = True
            for key in ("terms", "pattern", "message"):
                if f"{kind}_{key}" in self.fields and key in layer:
                    self.fields[f"{kind}_{key}"].initial = layer[key]
            model = (layer.get("judge_config") or {}).get("judge_model")
            if kind == "llm_check" and model:
                self.fields["llm_check_judge_model"].initial = model

    def defences(self) -> list[dict[str, Any]]:
        """The layers the editor describes, in the order they run. What the editor does not
        show of a stored layer (keys, or a second layer of a kind, set through the console
        API) is kept as it was."""
        cleaned, layers = self.cleaned_data, []
        stored = [item for item in (self.instance.defences or []) if isinstance(item, dict)]
        for kind, keys in DEFENCE_EDITOR.items():
            same_kind = [item for item in stored if item.get("type") == kind]
            if not cleaned.get(f"{kind}_on"):
                continue
            layer: dict[str, Any] = {**(same_kind[0] if same_kind else {}), "type": kind}
            for key in keys:
                layer.pop(key, None)
                if cleaned.get(f"{kind}_{key}"):
                    layer[key] = cleaned[f"{kind}_{key}"]
            if kind == "llm_check":
                config = {**(layer.get("judge_config") or {})}
                config.pop("judge_model", None)
                if cleaned.get("llm_check_judge_model"):
                    config["judge_model"] = cleaned["llm_check_judge_model"]
                layer.pop("judge_config", None)
                if config:
                    layer["judge_config"] = config
            layers += [layer, *same_kind[1:]]
        # The agent layers come from the agent editor's rows (challenges/admin_agent.py);
        # a layer of a kind no editor knows stays as it was.
        self._agent_layers_from = len(layers)
        return (
            layers
            + (
                self._agent_rows.layers()
                if self._agent_editor_posted()
                else [item for item in stored if is_agent_layer(item)]
            )
            + [
                item
                for item in stored
                if item.get("type") not in DEFENCE_EDITOR and not is_agent_layer(item)
            ]
        )

    def _show_agent(self, agent: dict, defences: list) -> None:
        if "agent_task" not in self.fields:
            return
        for name, value in agent_initial(agent, defences).items():
            if name in self.fields and value is not None:
                self.fields[name].initial = value
        if not agent_fits_rows(agent, defences):
            self.fields["agent_task"].help_text = (
                "This scenario holds more than the rows show: edit it in the JSON box "
                "(Agent scenario as JSON) so that nothing is lost."
            )
        for row, tool in enumerate(agent.get("tools") or [], start=1):
            name = f"agent_tool{row}_returns"
            if name in self.fields and isinstance(tool, dict):
                self.fields[name].help_text = placeholder_help(agent, tool)

    def _agent_editor_posted(self) -> bool:
        """Whether the post came from a form with the agent editor: a script or an older
        form that sends none of its fields leaves the scenario's layers as they were."""
        return "agent_task" in self.fields and any(key.startswith("agent_") for key in self.data)

    def _agent_from_rows(self, cleaned: dict[str, Any]) -> None:
        """The scenario: from the JSON box when the creator changed it, else from the rows."""
        self._agent_rows = AgentRows(
            cleaned, stored=self.instance.agent, stored_defences=self.instance.defences
        )
        self._agent_by_rows = False
        if not self._agent_editor_posted() or "agent" not in cleaned:
            return
        if self.has_error("agent"):
            return
        typed = cleaned.get("agent") or {}
        if typed != (self.instance.agent or {}):
            return
        cleaned["agent"] = self._agent_rows.agent()
        self._agent_by_rows = True
        for error in self._agent_rows.errors:
            self.add_error(error.field, error.message)

    def clean_mode(self) -> str:
        return self.cleaned_data.get("mode") or self.instance.mode or Challenge.Mode.SINGLE

    def clean_max_turns(self) -> int:
        value = self.cleaned_data.get("max_turns")
        return value if value is not None else self.instance.max_turns

    def clean_judge_scope(self) -> str:
        return (
            self.cleaned_data.get("judge_scope")
            or self.instance.judge_scope
            or Challenge.JudgeScope.TURN
        )

    def clean_answer_mode(self) -> str:
        return self.cleaned_data.get("answer_mode") or Challenge.AnswerMode.OUTPUT

    def clean_copy_policy(self) -> str:
        return self.cleaned_data.get("copy_policy") or self.instance.copy_policy

    def clean_copy_threshold(self) -> float:
        threshold = self.cleaned_data.get("copy_threshold")
        return self.instance.copy_threshold if threshold is None else threshold

    def _secret_choices(self) -> list[tuple[str, str]]:
        if self.instance.workspace_id:
            secrets = Secret.objects.filter(workspace_id=self.instance.workspace_id)
        elif self.writable_workspaces is not None:
            secrets = Secret.objects.filter(workspace__in=self.writable_workspaces)
        else:
            secrets = Secret.objects.all()
        names = set(secrets.values_list("name", flat=True))
        if self.instance.secret_ref:
            names.add(self.instance.secret_ref)
        return [("", "— none —")] + [(name, name) for name in sorted(names)]

    def _workspace_id(self) -> Any:
        workspace = self.cleaned_data.get("workspace")
        return workspace.pk if workspace else self.instance.workspace_id

    def judge_config(self) -> dict[str, Any]:
        config = {}
        for field_name, key in JUDGE_FIELDS.items():
            value = self.cleaned_data.get(field_name)
            if value not in (None, ""):
                config[key] = _whole(value) if key == "pass_threshold" else value
        return config

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name, empty in _JSON_EMPTY.items():
            if name in cleaned and cleaned[name] is None:
                cleaned[name] = empty()
        cleaned["judge_config"] = self.judge_config()
        cleaned["judge_panel"] = self.judge_panel()
        self._agent_from_rows(cleaned)
        cleaned["defences"] = self.defences()
        cleaned["targets"] = self.targets()
        workspace_id = self._workspace_id()
        if workspace_id is None:
            return cleaned

        secrets = dict(
            Secret.objects.filter(workspace_id=workspace_id).values_list("name", "value")
        )
        self._clean_new_secret(cleaned, secrets)
        data = {name: cleaned.get(name, getattr(self.instance, name)) for name in CHALLENGE_FIELDS}
        errors = challenge_errors(data, secret_names=set(secrets), secret_values=secrets)
        for field, messages in errors.items():
            for message in messages:
                self._add_challenge_error(field, message)
        return cleaned

    def _clean_new_secret(self, cleaned: dict[str, Any], secrets: dict[str, str]) -> None:
        """A secret typed into the form is checked here and made by the admin's save."""
        name = (cleaned.get("new_secret_name") or "").strip()
        value = cleaned.get("new_secret_value") or ""
        if not name and not value:
            return
        if not name:
            self.add_error("new_secret_name", "Name the new secret.")
            return
        if not value:
            self.add_error("new_secret_value", "A secret needs a value.")
            return
        try:
            _SECRET_NAME(name)
        except forms.ValidationError as exc:
            self.add_error("new_secret_name", exc)
            return
        if name in secrets:
            self.add_error(
                "new_secret_name",
                "This workspace already has a secret with this name; choose it above.",
            )
            return
        cleaned["new_secret_name"] = name
        cleaned["secret_ref"] = name
        # The checks below see the secret as if it were already stored.
        secrets[name] = value

    def _add_challenge_error(self, field: str, message: str) -> None:
        if field == "agent" and self._agent_by_rows:
            row_field, said = self._agent_rows.field_for(message)
            if row_field in self.fields:
                self.add_error(row_field, said)
                return
        if field == "defences" and self._agent_by_rows:
            number = re.match(r"Layer (\d+):", message)
            row_field = (
                self._agent_rows.layer_field(int(number.group(1)) - self._agent_layers_from)
                if number
                else None
            )
            if row_field in self.fields:
                self.add_error(row_field, message.split(": ", 1)[1])
                return
        if field == "defences":
            field = next(
                (f"{kind}_on" for kind in DEFENCE_EDITOR if self.cleaned_data.get(f"{kind}_on")),
                "input_filter_on",
            )
        if field == "targets":
            field = "target_1_codename"
        if field == "judge_panel":
            field = "panel_judge_models"
        if field == "judge_config":
            for form_field, key in JUDGE_FIELDS.items():
                if f"'{key}'" in message:
                    field = form_field
                    break
        self.add_error(field if field in self.fields else None, message)


# The target rows and the agent editor's rows, made in a loop, join the declared fields.
ChallengeAdminForm.declared_fields.update(_target_row_fields())
ChallengeAdminForm.declared_fields.update(agent_form_fields())
ChallengeAdminForm.base_fields.update(ChallengeAdminForm.declared_fields)


class SecretAdminForm(forms.ModelForm):
    # Never bound to Secret.value: the stored value is not read into the form at all.
    new_value = forms.CharField(
        label="Value",
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Write-only. On an existing secret, leave blank to keep the current value.",
    )

    class Meta:
        model = Secret
        fields = ("workspace", "name")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "name" in self.fields:
            self.fields["name"].validators.append(_SECRET_NAME)

    def clean_new_value(self) -> str:
        value = self.cleaned_data.get("new_value") or ""
        if self.instance._state.adding and not value:
            raise forms.ValidationError("A secret needs a value.")
        return value


class BridgeKeyAdminForm(forms.ModelForm):
    class Meta:
        model = BridgeKey
        fields = ("workspace", "name")


class ChallengeCollectionAdminForm(forms.ModelForm):
    class Meta:
        model = ChallengeCollection
        fields = ("workspace", *COLLECTION_FIELDS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "slug" in self.fields:
            self.fields["slug"].required = False
            self.fields["slug"].help_text = "Left blank, it is made from the name."

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for name in ("theme", "scoring_config"):
            if name in cleaned and cleaned[name] is None:
                cleaned[name] = {}
        data = {name: cleaned.get(name, getattr(self.instance, name)) for name in COLLECTION_FIELDS}
        for field, messages in collection_errors(data).items():
            for message in messages:
                self.add_error(field if field in self.fields else None, message)
        return cleaned


class CollectionItemFormSet(BaseInlineFormSet):
    def clean(self) -> None:
        super().clean()
        workspace_id = self.instance.workspace_id
        for form in self.forms:
            challenge = (form.cleaned_data or {}).get("challenge")
            if challenge is None or form.cleaned_data.get("DELETE"):
                continue
            if workspace_id and challenge.workspace_id != workspace_id:
                form.add_error("challenge", "This challenge belongs to another workspace.")


class HintAdminForm(forms.ModelForm):
    class Meta:
        widgets = {"body_md": forms.Textarea(attrs={"rows": 3, "cols": 48})}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("DELETE"):
            return cleaned
        values = {name: cleaned.get(name) for name in HINT_FIELDS}
        for name, messages in hint_errors(values).items():
            if name in self.fields and not self.has_error(name):
                self.add_error(name, messages)
        return cleaned


class PrerequisiteFormSet(BaseInlineFormSet):
    """The challenge's prerequisites, checked as a whole: same workspace, no cycle."""

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        chosen = [
            form.cleaned_data["prerequisite"].pk
            for form in self.forms
            if form.cleaned_data
            and not form.cleaned_data.get("DELETE")
            and form.cleaned_data.get("prerequisite")
        ]
        instance = self.instance
        errors = prerequisite_errors(
            challenge_id=None if instance._state.adding else instance.pk,
            workspace_id=instance.workspace_id,
            prerequisite_ids=chosen,
        )
        if errors:
            raise forms.ValidationError(errors)


class AdminEmailLoginForm(AdminAuthenticationForm):
    """The admin login, labelled for what creators sign in with: their email address."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        field.label = "Email"
        field.widget.input_type = "email"
        field.widget.attrs["autocomplete"] = "email"

    def get_invalid_login_error(self) -> forms.ValidationError:
        return forms.ValidationError(
            "Please enter the email and password of a staff account. Both may be case-sensitive.",
            code="invalid_login",
        )


class BountyAdminForm(forms.ModelForm):
    class Meta:
        model = Bounty
        fields = ("challenge", "codename", "kind", "amount", "currency", "cap")

    def clean(self):
        cleaned = super().clean()
        challenge = cleaned.get("challenge") or getattr(self.instance, "challenge", None)
        if challenge is None or self.errors:
            return cleaned
        try:
            bounty_check(
                challenge=challenge,
                codename=cleaned.get("codename") or "",
                kind=cleaned.get("kind") or "",
                amount=cleaned.get("amount"),
                currency=cleaned.get("currency") or "",
                cap=cleaned.get("cap"),
            )
        except ApplicationError as error:
            _form_errors(self, error)
        return cleaned


def _form_errors(form: forms.ModelForm, error: ApplicationError) -> None:
    for field, messages_of_field in (error.fields or {"__all__": [error.message]}).items():
        for message in messages_of_field:
            form.add_error(field if field in form.fields else None, message)


class WaveAdminForm(forms.ModelForm):
    class Meta:
        model = Wave
        fields = ("workspace", "name", "challenges", "opens_at", "closes_at")

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        workspace = cleaned.get("workspace") or getattr(self.instance, "workspace", None)
        try:
            wave_check(
                name=cleaned.get("name") or "",
                opens_at=cleaned.get("opens_at"),
                closes_at=cleaned.get("closes_at"),
            )
        except ApplicationError as error:
            _form_errors(self, error)
        others = [c for c in cleaned.get("challenges") or [] if c.workspace_id != workspace.pk]
        if others:
            self.add_error("challenges", "Only challenges of the wave's workspace.")
        return cleaned
