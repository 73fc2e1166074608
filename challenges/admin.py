"""Creators' admin for challenges; rows are scoped by players.scoping.WorkspaceScopedAdmin.

Writes go through challenges.services so the rules live in one place; the forms in
admin_forms only check input with challenges.validation.
"""

import json
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Count, QuerySet
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    StreamingHttpResponse,
)
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.timesince import timesince

from challenges.admin_forms import (
    DEFENCE_EDITOR_FIELDS,
    TARGET_EDITOR_FIELDS,
    AdminEmailLoginForm,
    BountyAdminForm,
    BridgeKeyAdminForm,
    ChallengeAdminForm,
    ChallengeCollectionAdminForm,
    CollectionItemFormSet,
    HintAdminForm,
    PrerequisiteFormSet,
    SecretAdminForm,
    WaveAdminForm,
)
from challenges.admin_try_it import challenge_try_it
from challenges.exports import attempts_csv_response
from challenges.models import (
    Bounty,
    BridgeKey,
    Challenge,
    ChallengeAttempt,
    ChallengeCollection,
    ChallengePrerequisite,
    CollectionItem,
    Hint,
    ModelPrice,
    PlaySession,
    Secret,
    Wave,
)
from challenges.modes import play_mode_sections, play_mode_settings
from challenges.selectors.challenge_stats import challenges_with_play_stats
from challenges.selectors.targets import target_solve_rates
from challenges.services.bounties import bounty_create, bounty_delete, bounty_update
from challenges.services.bridge_keys import bridge_key_create, bridge_key_revoke
from challenges.services.challenges import (
    BUDGET_FIELDS,
    CHALLENGE_FIELDS,
    challenge_create,
    challenge_delete,
    challenge_update,
)
from challenges.services.collections import (
    COLLECTION_FIELDS,
    collection_create,
    collection_delete,
    collection_set_challenges,
    collection_update,
)
from challenges.services.hints import HINT_FIELDS, hint_create, hint_delete, hint_update
from challenges.services.prerequisites import challenge_set_prerequisites
from challenges.services.secrets import (
    secret_create,
    secret_delete,
    secret_update,
    secret_value_for,
)
from challenges.services.waves import wave_create, wave_delete, wave_update
from core.redaction import redact_secrets
from core.theme import THEME_KEYS
from players.scoping import (
    WorkspaceScopedAdmin,
    WorkspaceScopedInline,
    can_write_any,
    workspace_roles,
)
from players.selectors import workspaces_for_user

# Creators sign in with their email address; the account's username is that email.
admin.site.login_form = AdminEmailLoginForm

_by_workspace = ("workspace", admin.RelatedOnlyFieldListFilter)


def _user_label(user) -> str:
    if user is None:
        return "—"
    return user.get_full_name() or user.email or user.get_username()


def _adopt(saved: models.Model, obj: models.Model) -> None:
    """Make the admin's instance the row a service saved, for the log entry and redirect."""
    for field in saved._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding = False
    obj._state.db = saved._state.db


# --- Challenges -----------------------------------------------------------------------

_JUDGE_FIELDSET = (
    "judge_model",
    ("judge_temperature", "judge_max_tokens"),
    "judge_rubric_prompt_template",
    ("judge_rating_scale", "judge_pass_threshold"),
)
_PANEL_FIELDSET = ("panel_judge_models", ("panel_rule", "panel_review", "panel_review_margin"))
_THEME_HELP = "A JSON object; allowed keys: " + ", ".join(
    f"{key} ({expected})" for key, (_, _, expected) in THEME_KEYS.items()
)


class HintInline(WorkspaceScopedInline):
    model = Hint
    form = HintAdminForm
    fields = ("order", "body_md", "cost", "unlocks")
    readonly_fields = ("unlocks",)
    extra = 0
    verbose_name_plural = "Hints (free when the cost is 0; a paid one comes off the scoreboard)"

    def get_queryset(self, request: HttpRequest):
        # Explicit order: Meta.ordering does not apply to a grouped query.
        return (
            super()
            .get_queryset(request)
            .annotate(unlocks_count=Count("unlocks"))
            .order_by("order", "created_at", "id")
        )

    @admin.display(description="Unlocks")
    def unlocks(self, obj: Hint) -> str:
        # Players who paid for it; free hints are read without unlocking.
        if obj._state.adding:
            return "—"
        return "free" if obj.is_free else str(getattr(obj, "unlocks_count", 0))


class PrerequisiteInline(WorkspaceScopedInline):
    model = ChallengePrerequisite
    fk_name = "challenge"
    formset = PrerequisiteFormSet
    fields = ("prerequisite",)
    extra = 0
    verbose_name = "prerequisite"
    verbose_name_plural = "Prerequisites (challenges of this workspace a player must solve first)"

    def get_queryset(self, request: HttpRequest):
        return super().get_queryset(request).select_related("prerequisite")


@admin.register(Challenge)
class ChallengeAdmin(WorkspaceScopedAdmin):
    form = ChallengeAdminForm
    inlines = (PrerequisiteInline, HintInline)
    list_display = (
        "name",
        "workspace",
        "evaluator",
        "ranking",
        "active",
        "solves",
        "players",
        "solve_rate",
        "last_attempt",
    )
    list_filter = ("is_active", "evaluator_type", "target", _by_workspace)
    search_fields = ("name", "slug", "goal")
    actions = ("publish",)
    list_select_related = ("workspace",)
    prepopulated_fields = {"slug": ("name",)}
    # Names as text: a link to the user admin would answer 403 to a creator.
    readonly_fields = (
        "created_by_name",
        "updated_by_name",
        "created_at",
        "updated_at",
        "target_solve_rates",
    )

    def get_queryset(self, request: HttpRequest):
        return challenges_with_play_stats(super().get_queryset(request))

    def get_list_display(self, request: HttpRequest):
        # A creator of one workspace needs no workspace column; the room goes to the stats.
        if not request.user.is_superuser and len(workspace_roles(request)) == 1:
            return tuple(name for name in self.list_display if name != "workspace")
        return self.list_display

    def view_on_site(self, obj: Challenge) -> str | None:
        # A draft has no page a visitor can open yet (the link would be a 404).
        if obj._state.adding or not obj.slug or not obj.is_active:
            return None
        return reverse("challenge-page", args=[obj.slug])

    # Short headers: the play figures need the room.
    @admin.display(description="Evaluator", ordering="evaluator_type")
    def evaluator(self, obj: Challenge) -> str:
        return obj.get_evaluator_type_display()

    @admin.display(description="Ranking", ordering="scoring_strategy")
    def ranking(self, obj: Challenge) -> str:
        return obj.get_scoring_strategy_display()

    @admin.display(description="Active", boolean=True, ordering="is_active")
    def active(self, obj: Challenge) -> bool:
        return obj.is_active

    @admin.display(description="Solves", ordering="solves")
    def solves(self, obj: Challenge) -> int:
        return obj.solves

    @admin.display(description="Players", ordering="players")
    def players(self, obj: Challenge) -> int:
        return obj.players

    @admin.display(description="Solve rate", ordering="solve_rate")
    def solve_rate(self, obj: Challenge) -> str:
        if obj.solve_rate is None:
            return "—"
        return f"{obj.solve_rate:.0%}"

    @admin.display(description="Last attempt", ordering="last_attempt_at")
    def last_attempt(self, obj: Challenge) -> str:
        if obj.last_attempt_at is None:
            return "never"
        ago = timesince(obj.last_attempt_at).split(",")[0]
        return "just now" if ago.startswith("0\xa0") else f"{ago} ago"

    @admin.display(description="Created by")
    def created_by_name(self, obj: Challenge) -> str:
        return _user_label(obj.created_by)

    @admin.display(description="Solve rate per target")
    def target_solve_rates(self, obj: Challenge) -> str:
        rows = target_solve_rates(challenge=obj)
        if not rows:
            return "–"
        return format_html_join(
            mark_safe("<br>"),
            "{} ({}): {} of {} players",
            ((row.codename, row.model, row.solves, row.players) for row in rows),
        )

    @admin.display(description="Updated by")
    def updated_by_name(self, obj: Challenge) -> str:
        return _user_label(obj.updated_by)

    class Media:
        js = ("js/challenge_admin_form.js", "js/agent_editor.js")
        css = {"all": ("css/admin_extra.css",)}

    def get_fieldsets(self, request: HttpRequest, obj=None):
        editable = obj is None or self.has_change_permission(request, obj)
        # Each optional section says when it applies (`when-<field>-<value>` classes read
        # by static/js/challenge_admin_form.js); without JavaScript, a section that does
        # not apply to the values in hand starts collapsed.
        values = {
            name: request.POST.get(name) or getattr(obj, name, None) or default
            for name, default in (
                ("target", Challenge.Target.OFFLINE),
                ("evaluator_type", Challenge.EvaluatorType.RULES),
                ("scoring_strategy", Challenge.Strategy.FIRST),
                ("mode", Challenge.Mode.SINGLE),
            )
        }

        def when(field: str, *choices: str) -> tuple[str, ...]:
            conditions = tuple(f"when-{field}-{choice}" for choice in choices)
            return conditions if values[field] in choices else ("collapse", *conditions)

        secret_fields = ("secret_ref", ("new_secret_name", "new_secret_value"))
        fieldsets = [
            (
                "Basics",
                {
                    "fields": (
                        "workspace",
                        "name",
                        "slug",
                        "description",
                        "goal",
                        "instructions_md",
                        "is_active",
                        ("starts_at", "ends_at"),
                    )
                },
            ),
            (
                "Target model and defence",
                {
                    "description": "The model players attack, and the defence it runs with. "
                    "{{secret}} in the system prompt is filled in on the server.",
                    "fields": (
                        "target",
                        "target_model",
                        "system_prompt",
                        *(secret_fields if editable else ("secret_ref",)),
                    ),
                },
            ),
            (
                "Game: answer mode, per-player secrets, defence layers",
                {
                    "description": "Answer mode 'output' judges the model's reply. 'guess' "
                    "never judges the reply: players type the secret they worked out into an "
                    "answer box (compared ignoring case, spaces around it and Unicode forms); "
                    "with an output guard on, guess mode is what makes the level winnable. "
                    "Per-player secrets give each player their own {{secret}}, derived on the "
                    "server: a word from your list plus an 8-character suffix, or a "
                    "12-character token when the list is empty.",
                    "fields": (
                        "answer_mode",
                        "secret_per_player",
                        "secret_words",
                        *DEFENCE_EDITOR_FIELDS,
                    ),
                },
            ),
            (
                "Kind of play",
                {
                    "description": "single: one prompt, one reply. conversation: a session of "
                    "up to 'max turns' turns in which the model sees the whole history; the "
                    "rules are checked after every turn (on the turn's reply, or with 'the "
                    "whole session' on the transcript), and a session closes when it wins, "
                    "reaches its turns or spends its token budget. agent: the model calls "
                    "tools and reads text the player writes into the scenario's slots; a run "
                    "wins by a tool call matching the scenario's win rule (docs/agents.md).",
                    "fields": ("mode", *play_mode_settings()),
                },
            ),
            *play_mode_sections(lambda mode: when("mode", mode)),
            (
                "Several targets",
                {
                    "classes": ("collapse",) if not getattr(obj, "targets", None) else (),
                    "description": "List two or more models to play this challenge against "
                    "several at once. Players see the codenames only; a win counts for the "
                    "model it was made against, each has its own board, and the combined "
                    "board counts the models each player broke. Round robin gives each play "
                    "the next model in turn; choice lets the player pick. Reveal shows "
                    "players which model each codename was.",
                    "fields": (
                        ("target_assignment", "reveal_targets"),
                        *TARGET_EDITOR_FIELDS,
                        *(("target_solve_rates",) if obj is not None else ()),
                    ),
                },
            ),
            (
                "Evaluation and scoring",
                {"fields": ("evaluator_type", "scoring_strategy", "max_attempts_per_hour")},
            ),
            (
                "Rules",
                {
                    "classes": when("evaluator_type", "rules"),
                    "description": "The reply wins when it matches the success pattern.",
                    "fields": ("success_type", "success_pattern"),
                },
            ),
            (
                "LLM judge",
                {
                    "classes": when("evaluator_type", "llm-judge"),
                    "description": "A judge model rates each reply against the goal.",
                    "fields": _JUDGE_FIELDSET if editable else ("judge_config",),
                },
            ),
            (
                "Judge panel",
                {
                    "classes": when("evaluator_type", "llm-judge"),
                    "description": "Two or more judges instead of one; disputed verdicts go "
                    "to the Reviews queue (docs/reviews.md).",
                    "fields": _PANEL_FIELDSET if editable else ("judge_panel",),
                },
            ),
            (
                "Custom evaluator plugin",
                {
                    "classes": when("evaluator_type", "custom"),
                    "fields": ("evaluator_plugin_id", "evaluator_entrypoint", "evaluator_config"),
                },
            ),
            (
                "Custom scoring plugin",
                {
                    "classes": when("scoring_strategy", "custom"),
                    "fields": ("scoring_plugin_id", "scoring_entrypoint", "scoring_config"),
                },
            ),
            (
                "Dify",
                {
                    "classes": when("target", "dify"),
                    "description": "For challenges played through a Dify app: the ids tie "
                    "the bridge's calls and the workflow to this challenge.",
                    "fields": (("app_id", "workflow_id"),),
                },
            ),
            (
                "Copies",
                {
                    "classes": ("collapse",),
                    "description": "Winning prompts are compared with other players' earlier "
                    "winning prompts on this challenge (trigram similarity, 0 to 1; see "
                    "docs/copies.md).",
                    "fields": (("copy_policy", "copy_threshold"),),
                },
            ),
            (
                "Budget",
                {
                    "classes": ("collapse",),
                    "description": "Attempts start only while each budget set here has "
                    "something left (tokens, or money at the workspace's model prices); then "
                    "the challenge pauses, or plays on with the fallback model (see "
                    "docs/budgets.md).",
                    "fields": (
                        ("budget_tokens", "budget_cost"),
                        ("player_budget_tokens", "player_budget_cost"),
                        "fallback_target",
                    ),
                },
            ),
            ("Theme", {"classes": ("collapse",), "description": _THEME_HELP, "fields": ("theme",)}),
            (
                "Advanced",
                {
                    "classes": ("collapse",),
                    "fields": ("target_config", "mask_variables", "keep_failed_prompts"),
                },
            ),
        ]
        if obj is not None:
            fieldsets.append(
                (
                    "Record",
                    {
                        "classes": ("collapse",),
                        "fields": (
                            "created_by_name",
                            "updated_by_name",
                            "created_at",
                            "updated_at",
                        ),
                    },
                )
            )
        return fieldsets

    def get_form(self, request: HttpRequest, obj=None, change=False, **kwargs: Any):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.writable_workspaces = workspaces_for_user(user=request.user, writable=True)
        return form

    def save_model(self, request: HttpRequest, obj: Challenge, form, change: bool) -> None:
        new_secret_name = form.cleaned_data.get("new_secret_name")
        if new_secret_name:
            # In the admin's transaction: a challenge that fails to save takes it back.
            workspace = form.cleaned_data.get("workspace") or obj.workspace
            secret_create(
                workspace=workspace,
                name=new_secret_name,
                value=form.cleaned_data["new_secret_value"],
            )
        fields = {
            name: form.cleaned_data[name]
            for name in (*CHALLENGE_FIELDS, *BUDGET_FIELDS)
            if name in form.cleaned_data
        }
        if change:
            # The form already copied its values onto `obj`; the service compares against
            # the stored row (a strategy change rebuilds the leaderboard).
            stored = Challenge.objects.get(pk=obj.pk)
            saved = challenge_update(challenge=stored, user=request.user, **fields)
        else:
            saved = challenge_create(
                workspace=form.cleaned_data["workspace"], user=request.user, **fields
            )
        _adopt(saved, obj)
        if not saved.is_active:
            messages.info(
                request,
                f"“{saved.name}” is a draft: players do not see it until you publish it "
                "(tick “Is active”, or the “Publish” action on the list).",
            )

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        # Through the services, in the admin's transaction: the same checks as the API.
        challenge = form.instance
        if isinstance(formset, PrerequisiteFormSet):
            formset.save(commit=False)  # only for the history message
            chosen = [
                item.cleaned_data["prerequisite"].pk
                for item in formset.forms
                if item.cleaned_data
                and not item.cleaned_data.get("DELETE")
                and item.cleaned_data.get("prerequisite")
            ]
            challenge_set_prerequisites(challenge=challenge, prerequisite_ids=chosen)
            return
        if formset.model is not Hint:
            return super().save_formset(request, form, formset, change)
        formset.save(commit=False)  # fills new_objects, changed_objects, deleted_objects
        for hint in formset.deleted_objects:
            hint_delete(hint=hint)
        for hint, _ in formset.changed_objects:
            hint_update(hint=hint, **{name: getattr(hint, name) for name in HINT_FIELDS})
        for hint in formset.new_objects:
            hint_create(challenge=challenge, **{name: getattr(hint, name) for name in HINT_FIELDS})

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        # A new challenge starts as a draft, so nothing half-made is published by accident.
        return {**super().get_changeform_initial_data(request), "is_active": False}

    @admin.action(description="Publish the selected challenges", permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet) -> None:
        published = 0
        for challenge in queryset.filter(is_active=False):
            challenge_update(challenge=challenge, user=request.user, is_active=True)
            published += 1
        messages.success(request, f"Published {published} challenge{'s' * (published != 1)}.")

    def delete_model(self, request: HttpRequest, obj: Challenge) -> None:
        challenge_delete(challenge=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for challenge in queryset:
            challenge_delete(challenge=challenge)

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_try"
        # Not wrapped in admin_view (a sync wrapper): the async view checks staff status
        # and workspace membership itself, and CSRF as every POST.
        return [
            path("<path:object_id>/try/", challenge_try_it, name=name),
            *super().get_urls(),
        ]


# --- Secrets --------------------------------------------------------------------------


@admin.register(Secret)
class SecretAdmin(WorkspaceScopedAdmin):
    form = SecretAdminForm
    list_display = ("name", "workspace", "updated_at")
    list_filter = (_by_workspace,)
    # Never the value: searching it would reveal it one guess at a time.
    search_fields = ("name",)
    list_select_related = ("workspace",)

    # Viewers do not see secrets at all: only owners and editors, who may replace them.
    def get_queryset(self, request: HttpRequest):
        queryset = super().get_queryset(request).defer("value")
        if request.user.is_superuser:
            return queryset
        return queryset.filter(workspace__in=workspaces_for_user(user=request.user, writable=True))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return super().has_module_permission(request) and can_write_any(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return self.has_change_permission(request, obj)

    def get_fields(self, request: HttpRequest, obj=None):
        if obj is None:
            return ("workspace", "name", "new_value")
        if not self.has_change_permission(request, obj):
            return ("workspace", "name", "created_at", "updated_at")
        return ("workspace", "name", "new_value", "created_at", "updated_at")

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # Challenges refer to a secret by name, so an existing secret keeps its name.
        return () if obj is None else ("workspace", "name", "created_at", "updated_at")

    def get_actions(self, request: HttpRequest):
        actions = super().get_actions(request)
        # A secret in use must not go; the single delete page says which challenges use it.
        actions.pop("delete_selected", None)
        return actions

    def save_model(self, request: HttpRequest, obj: Secret, form, change: bool) -> None:
        value = form.cleaned_data.get("new_value") or ""
        if change:
            if value:
                secret_update(secret=Secret.objects.get(pk=obj.pk), value=value)
            return
        saved = secret_create(
            workspace=form.cleaned_data["workspace"], name=form.cleaned_data["name"], value=value
        )
        _adopt(saved, obj)

    def delete_model(self, request: HttpRequest, obj: Secret) -> None:
        secret_delete(secret=obj)


# --- Prices ---------------------------------------------------------------------------


@admin.register(ModelPrice)
class ModelPriceAdmin(WorkspaceScopedAdmin):
    list_display = ("model", "input_per_1k", "output_per_1k", "currency", "workspace")
    list_filter = (_by_workspace,)
    search_fields = ("model",)
    list_select_related = ("workspace",)
    fields = ("workspace", "model", "input_per_1k", "output_per_1k", "currency")


# --- Bounties and waves ----------------------------------------------------------------


@admin.register(Bounty)
class BountyAdmin(WorkspaceScopedAdmin):
    form = BountyAdminForm
    list_display = ("challenge", "codename", "kind", "amount", "currency", "cap", "workspace")
    list_filter = (_by_workspace, "kind")
    list_select_related = ("challenge", "workspace")

    def get_fields(self, request: HttpRequest, obj=None):
        return ("challenge", "codename", "kind", "amount", "currency", "cap")

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # A bounty stays on its challenge (its workspace's); the offer itself may change.
        return () if obj is None else ("challenge",)

    def save_model(self, request: HttpRequest, obj: Bounty, form, change: bool) -> None:
        data = form.cleaned_data
        offer = {
            "kind": data["kind"],
            "amount": data["amount"],
            "codename": data.get("codename") or "",
            "currency": data["currency"],
            "cap": data.get("cap"),
        }
        if change:
            bounty_update(bounty=Bounty.objects.get(pk=obj.pk), **offer)
            return
        _adopt(bounty_create(challenge=data["challenge"], **offer), obj)

    def delete_model(self, request: HttpRequest, obj: Bounty) -> None:
        bounty_delete(bounty=obj)


@admin.register(Wave)
class WaveAdmin(WorkspaceScopedAdmin):
    form = WaveAdminForm
    list_display = ("name", "opens_at", "closes_at", "state", "workspace")
    list_filter = (_by_workspace, "state")
    list_select_related = ("workspace",)
    filter_horizontal = ("challenges",)
    fields = ("workspace", "name", "challenges", "opens_at", "closes_at", "state")
    readonly_fields = ("state",)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "challenges" and not request.user.is_superuser:
            kwargs["queryset"] = Challenge.objects.filter(
                workspace__in=workspaces_for_user(user=request.user, writable=True)
            )
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Wave, form, change: bool) -> None:
        data = form.cleaned_data
        challenge_ids = [challenge.pk for challenge in data.get("challenges") or []]
        if change:
            wave_update(
                wave=Wave.objects.get(pk=obj.pk),
                name=data["name"],
                challenge_ids=challenge_ids,
                opens_at=data["opens_at"],
                closes_at=data["closes_at"],
            )
            return
        saved = wave_create(
            workspace=data["workspace"],
            name=data["name"],
            challenge_ids=challenge_ids,
            opens_at=data["opens_at"],
            closes_at=data["closes_at"],
        )
        _adopt(saved, obj)

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        # The service set the challenges; the form's copy would only repeat it.
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)

    def delete_model(self, request: HttpRequest, obj: Wave) -> None:
        wave_delete(wave=obj)


# --- Attempts -------------------------------------------------------------------------


@admin.register(ChallengeAttempt)
class ChallengeAttemptAdmin(WorkspaceScopedAdmin):
    read_only = True
    readonly_fields = ("judge_output",)
    list_display = (
        "player",
        "challenge",
        "succeeded",
        "score",
        "judge_rating",
        "tokens_total",
        "cost",
        "elapsed_ms",
        "source",
        "prompt_kept",
        "created_at",
    )
    list_filter = (
        ("challenge", admin.RelatedOnlyFieldListFilter),
        "succeeded",
        "source",
        "created_at",
    )
    search_fields = ("end_user__external_id", "prompt")
    list_select_related = ("end_user", "challenge")
    actions = ("export_csv",)
    fields = (
        "challenge",
        "end_user",
        "account",
        "succeeded",
        "score",
        "judge_rating",
        "judge_feedback",
        "judge_output",
        "tokens_total",
        "cost",
        "elapsed_ms",
        "prompt",
        "response",
        "prompt_length",
        "response_length",
        "source",
        "workflow_run_id",
        "idempotency_key",
        "near_copy_of",
        "near_copy_similarity",
        "created_at",
    )

    def get_queryset(self, request: HttpRequest):
        # The page title names the player and the challenge.
        return super().get_queryset(request).select_related("end_user", "challenge")

    @admin.display(description="Player", ordering="end_user__external_id")
    def player(self, obj: ChallengeAttempt) -> str:
        return str(obj.end_user)

    @admin.display(description="Prompt (kept, masked)")
    def prompt_kept(self, obj: ChallengeAttempt) -> str:
        # Winning attempts, and failed ones when the challenge keeps failed prompts.
        if not obj.prompt:
            return "—"
        return obj.prompt if len(obj.prompt) <= 80 else obj.prompt[:79] + "…"

    @admin.display(description="Judge output (raw)")
    def judge_output(self, obj: ChallengeAttempt) -> str:
        if obj.judge_output_raw is None:
            return "—"
        # A judge model may quote the secret back; the raw answer is stored as it came.
        text = json.dumps(obj.judge_output_raw, indent=2, ensure_ascii=False)
        secret = secret_value_for(challenge=obj.challenge)
        return format_html("<pre>{}</pre>", redact_secrets(text, [secret]))

    @admin.action(description="Export selected attempts as CSV", permissions=["view"])
    def export_csv(self, request: HttpRequest, queryset: QuerySet) -> StreamingHttpResponse:
        return attempts_csv_response(queryset)

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_export"
        return [
            path("export/", self.admin_site.admin_view(self.export_view), name=name),
            *super().get_urls(),
        ]

    def export_view(self, request: HttpRequest) -> HttpResponse:
        """The changelist's rows, with its filters and search, as CSV."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return HttpResponseRedirect(reverse("admin:challenges_challengeattempt_changelist"))
        return attempts_csv_response(changelist.queryset)


@admin.register(PlaySession)
class PlaySessionAdmin(WorkspaceScopedAdmin):
    """Conversation sessions (SPEC §9), read only: each links its transcript page."""

    read_only = True
    list_display = ("player", "challenge", "state", "turns_count", "tokens_total", "started_at")
    list_filter = (("challenge", admin.RelatedOnlyFieldListFilter), "state", "started_at")
    search_fields = ("end_user__external_id", "dify_conversation_id")
    list_select_related = ("end_user", "challenge")
    fields = (
        "challenge",
        "end_user",
        "state",
        "turns_count",
        "tokens_total",
        "elapsed_ms",
        "dify_conversation_id",
        "attempt",
        "started_at",
        "ended_at",
        "transcript",
    )
    readonly_fields = ("transcript",)

    @admin.display(description="Player", ordering="end_user__external_id")
    def player(self, obj: PlaySession) -> str:
        return str(obj.end_user)

    @admin.display(description="Transcript")
    def transcript(self, obj: PlaySession) -> str:
        url = reverse("session-page", args=[obj.pk])
        return format_html('<a href="{}">Read the {} turns (masked)</a>', url, obj.turns_count)


# --- Collections ----------------------------------------------------------------------


class CollectionItemInline(WorkspaceScopedInline):
    model = CollectionItem
    formset = CollectionItemFormSet
    fields = ("position", "challenge")
    extra = 1

    def get_queryset(self, request: HttpRequest):
        # Each row is titled by its challenge's name.
        return super().get_queryset(request).select_related("challenge")


@admin.register(ChallengeCollection)
class ChallengeCollectionAdmin(WorkspaceScopedAdmin):
    form = ChallengeCollectionAdminForm
    inlines = (CollectionItemInline,)
    list_display = ("name", "workspace", "scoring_strategy", "is_public", "created_at")
    list_filter = ("is_public", "scoring_strategy", _by_workspace)
    search_fields = ("name", "slug")
    list_select_related = ("workspace",)
    prepopulated_fields = {"slug": ("name",)}
    fieldsets = (
        (
            "Basics",
            {
                "fields": (
                    "workspace",
                    "name",
                    "slug",
                    "app_id",
                    "description",
                    "instructions_md",
                    "is_public",
                    "in_order",
                )
            },
        ),
        (
            "Scoring",
            {
                "fields": (
                    "scoring_strategy",
                    "scoring_plugin_id",
                    "scoring_entrypoint",
                    "scoring_config",
                )
            },
        ),
        ("Display", {"description": _THEME_HELP, "fields": ("theme",)}),
    )

    def save_model(self, request: HttpRequest, obj: ChallengeCollection, form, change) -> None:
        fields = {
            name: form.cleaned_data[name] for name in COLLECTION_FIELDS if name in form.cleaned_data
        }
        if change:
            stored = ChallengeCollection.objects.get(pk=obj.pk)
            saved = collection_update(collection=stored, **fields)
        else:
            saved = collection_create(
                workspace=form.cleaned_data["workspace"], user=request.user, **fields
            )
        _adopt(saved, obj)

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        if not isinstance(formset, CollectionItemFormSet):
            return super().save_formset(request, form, formset, change)
        # Only for the history message (it lists added, changed and deleted rows); the
        # service below writes the whole ordered list in one transaction.
        formset.save(commit=False)
        rows = []
        for index, item_form in enumerate(formset.forms):
            data = item_form.cleaned_data
            if not data or data.get("DELETE") or not data.get("challenge"):
                continue
            rows.append((data.get("position") or 0, index, data["challenge"].pk))
        collection_set_challenges(
            collection=form.instance, challenge_ids=[pk for _, _, pk in sorted(rows)]
        )

    def delete_model(self, request: HttpRequest, obj: ChallengeCollection) -> None:
        collection_delete(collection=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for collection in queryset:
            collection_delete(collection=collection)


# --- Bridge keys ----------------------------------------------------------------------


@admin.register(BridgeKey)
class BridgeKeyAdmin(WorkspaceScopedAdmin):
    form = BridgeKeyAdminForm
    list_display = ("name", "key_prefix", "workspace", "created_at", "last_used_at", "revoked_at")
    list_filter = (_by_workspace, ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("name", "prefix")
    list_select_related = ("workspace",)
    actions = ("revoke",)

    @admin.display(description="Key", ordering="prefix")
    def key_prefix(self, obj: BridgeKey) -> str:
        return format_html("<code>{}…</code>", obj.prefix)

    def get_fields(self, request: HttpRequest, obj=None):
        if obj is None:
            return ("workspace", "name")
        return ("workspace", "name", "key_prefix", "created_at", "last_used_at", "revoked_at")

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return () if obj is None else self.get_fields(request, obj)

    # A key is never edited: it is created, then revoked.
    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return can_write_any(request)

    def save_model(self, request: HttpRequest, obj: BridgeKey, form, change: bool) -> None:
        key, plain = bridge_key_create(
            workspace=form.cleaned_data["workspace"], name=form.cleaned_data["name"]
        )
        _adopt(key, obj)
        obj._plain_key = plain

    def response_add(self, request: HttpRequest, obj: BridgeKey, post_url_continue=None):
        plain = getattr(obj, "_plain_key", None)
        if plain is None:
            return super().response_add(request, obj, post_url_continue)
        # Rendered straight from the POST, never put in a message or the session, so the
        # plain key is stored nowhere and cannot be shown a second time.
        context = {
            **self.admin_site.each_context(request),
            "title": "Bridge key created",
            "subtitle": None,
            "opts": self.opts,
            "original": obj,
            "plain_key": plain,
        }
        return TemplateResponse(request, "admin/challenges/bridgekey/created.html", context)

    @admin.action(description="Revoke selected keys", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> None:
        writable = workspaces_for_user(user=request.user, writable=True)
        revoked = 0
        for key in queryset.filter(workspace__in=writable, revoked_at__isnull=True):
            bridge_key_revoke(key=key)
            revoked += 1
        self.message_user(request, f"Revoked {revoked} key(s).", messages.SUCCESS)


from challenges import admin_reviews  # noqa: E402, F401 - registers the review queue
