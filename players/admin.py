"""The admin as creators use it: every row is scoped to the creator's workspaces.

A creator is a staff user with a Membership; what they may do follows the membership role
(owner, editor, viewer) rather than Django's per-model permissions, so giving someone a
workspace is all it takes. Superusers see and change everything.
"""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models
from django.db.models.constants import LOOKUP_SEP
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse

from core.errors import ApplicationError
from core.parsers import CheckedJSONDecoder
from players.events import end_user_bracket_set, event_settings_check, workspace_freeze_lift
from players.models import Bracket, EndUser, Membership, PlayerProfile, Workspace
from players.selectors import workspaces_for_user

admin.site.site_header = "Prompt Hacking Challenges"
admin.site.site_title = "Prompt Hacking Challenges admin"
admin.site.index_title = "Workspaces, challenges and players"

WRITE_ROLES = frozenset({Membership.Role.OWNER, Membership.Role.EDITOR})


def workspace_roles(request: HttpRequest) -> dict[Any, str]:
    """{workspace_id: role} for the requesting user, read once per request."""
    roles = getattr(request, "_workspace_roles", None)
    if roles is None:
        roles = dict(
            Membership.objects.filter(user_id=request.user.pk).values_list("workspace_id", "role")
        )
        request._workspace_roles = roles
    return roles


def role_in(request: HttpRequest, workspace_id: Any) -> str | None:
    if request.user.is_superuser:
        return Membership.Role.OWNER
    return workspace_roles(request).get(workspace_id)


def can_write_any(request: HttpRequest) -> bool:
    if request.user.is_superuser:
        return True
    return any(role in WRITE_ROLES for role in workspace_roles(request).values())


def _has_workspace_field(model: type[models.Model]) -> bool:
    try:
        field = model._meta.get_field("workspace")
    except Exception:  # noqa: BLE001 - FieldDoesNotExist and friends
        return False
    return field.is_relation and field.related_model is Workspace


def limit_foreign_key(request: HttpRequest, db_field, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Offer only the creator's writable workspaces, and only rows of their workspaces."""
    if request.user.is_superuser:
        return kwargs
    if db_field.related_model is Workspace:
        writable = workspaces_for_user(user=request.user, writable=True)
        kwargs["queryset"] = writable
        ids = list(writable.values_list("id", flat=True)[:2])
        if len(ids) == 1:
            kwargs["initial"] = ids[0]
    elif _has_workspace_field(db_field.related_model):
        kwargs["queryset"] = db_field.related_model._default_manager.filter(
            workspace__in=workspaces_for_user(user=request.user, writable=True)
        )
    return kwargs


# Fields whose values are secrets, hashes of secrets or encrypted secrets, besides those
# that say so themselves (core.encryption.EncryptedTextField has `holds_secret`).
SECRET_FIELD_NAMES = frozenset({"password", "key_hash", "secret_encrypted", "secret", "token"})


def field_holds_secret(field) -> bool:
    return getattr(field, "holds_secret", False) or (
        not field.is_relation and field.name in SECRET_FIELD_NAMES
    )


def lookup_touches_secret(model: type[models.Model], lookup: str) -> bool:
    """Whether a query-string lookup (`workspace__secrets__value__startswith`) reaches a
    secret field on its way, through any relation."""
    for part in lookup.split(LOOKUP_SEP):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False
        if field_holds_secret(field):
            return True
        if not field.is_relation or field.related_model is None:
            return False
        model = field.related_model
    return False


class SecretLookupGuard:
    """Refuse changelist filters on secret values: a filter's result count answers yes or
    no to a guess, which recovers a secret one character at a time. Django answers a
    refused lookup with 400, the same whether the guess was right or wrong."""

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if lookup_touches_secret(self.model, lookup):
            return False
        return super().lookup_allowed(lookup, value, request)


class WorkspaceScopedAdmin(SecretLookupGuard, admin.ModelAdmin):
    """Scope a model admin to the rows of the user's workspaces.

    `workspace_field` names the model's ForeignKey to Workspace (None for Workspace
    itself). `read_only` admins allow nobody to add or change rows (they are written by
    services elsewhere).
    """

    workspace_field: str | None = "workspace"
    read_only = False
    # JSON typed into the admin gets the API's limits (no NUL, no deep nesting): a 500 else.
    formfield_overrides = {models.JSONField: {"decoder": CheckedJSONDecoder}}

    def workspace_id_of(self, obj: models.Model) -> Any:
        if self.workspace_field is None:
            return obj.pk
        return getattr(obj, f"{self.workspace_field}_id")

    def get_queryset(self, request: HttpRequest):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        lookup = f"{self.workspace_field}__in" if self.workspace_field else "pk__in"
        return queryset.filter(**{lookup: workspaces_for_user(user=request.user)})

    def has_module_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return (
            user.is_active
            and user.is_staff
            and (user.is_superuser or bool(workspace_roles(request)))
        )

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return role_in(request, self.workspace_id_of(obj)) is not None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not self.read_only and can_write_any(request)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        if self.read_only:
            return False
        if obj is None:
            return can_write_any(request)
        return role_in(request, self.workspace_id_of(obj)) in WRITE_ROLES

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_change_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        # Moving a row to another workspace would strand what refers to it by name.
        if obj is not None and self.workspace_field and self.workspace_field not in readonly:
            readonly.append(self.workspace_field)
        return readonly

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        return super().formfield_for_foreignkey(
            db_field, request, **limit_foreign_key(request, db_field, kwargs)
        )

    # Forms check what they can; a service may still refuse (a lost race on a unique
    # name, a secret still in use). Its transaction is rolled back and the reason shown.
    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            opts = self.opts
            return HttpResponseRedirect(
                reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[object_id])
            )


class WorkspaceScopedInline(admin.TabularInline):
    """An inline whose rights follow the parent row's workspace."""

    def _parent_role(self, request: HttpRequest, obj) -> str | None:
        if obj is None:
            return Membership.Role.EDITOR if can_write_any(request) else None
        workspace_id = obj.pk if isinstance(obj, Workspace) else obj.workspace_id
        return role_in(request, workspace_id)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if request.user.is_superuser:
            return True
        # Django asks without a parent too (to build the inline's queryset), so any
        # membership will do there; the parent itself was already scoped.
        if obj is None:
            return bool(workspace_roles(request))
        return self._parent_role(request, obj) is not None

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._parent_role(request, obj) in WRITE_ROLES

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._parent_role(request, obj) in WRITE_ROLES

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._parent_role(request, obj) in WRITE_ROLES

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        return super().formfield_for_foreignkey(
            db_field, request, **limit_foreign_key(request, db_field, kwargs)
        )


# --- Workspaces and memberships -----------------------------------------------------


class MembershipFormSet(BaseInlineFormSet):
    def clean(self) -> None:
        super().clean()
        roles = [
            form.cleaned_data.get("role", form.instance.role)
            for form in self.forms
            if form.cleaned_data and not form.cleaned_data.get("DELETE")
        ]
        if self.forms and Membership.Role.OWNER not in roles:
            raise ValidationError("A workspace needs at least one owner.")


class MembershipInline(WorkspaceScopedInline):
    model = Membership
    formset = MembershipFormSet
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)
    raw_id_fields = ("user",)
    extra = 0

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # A creator manages roles of existing members; picking any account is for superusers,
        # so the user list is never shown to a creator.
        if request.user.is_superuser:
            return self.readonly_fields
        return ("user", "created_at")

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._parent_role(request, obj) == Membership.Role.OWNER

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._parent_role(request, obj) == Membership.Role.OWNER


class BracketInline(WorkspaceScopedInline):
    model = Bracket
    fields = ("name", "slug", "position")
    extra = 0


class WorkspaceForm(forms.ModelForm):
    class Meta:
        model = Workspace
        fields = (
            "name",
            "slug",
            "starts_at",
            "ends_at",
            "freeze_at",
            "board_visibility",
            "budget_tokens",
            "budget_cost",
        )

    def clean(self):
        cleaned = super().clean()
        for field, reasons in event_settings_check(
            starts_at=cleaned.get("starts_at"),
            ends_at=cleaned.get("ends_at"),
            freeze_at=cleaned.get("freeze_at"),
        ).items():
            for reason in reasons:
                self.add_error(field, reason)
        return cleaned


@admin.register(Workspace)
class WorkspaceAdmin(WorkspaceScopedAdmin):
    workspace_field = None
    form = WorkspaceForm
    list_display = ("name", "slug", "starts_at", "ends_at", "freeze_state", "board_visibility")
    search_fields = ("name", "slug")
    fieldsets = (
        (None, {"fields": ("name", "slug", "created_at")}),
        (
            "Event",
            {
                "description": "Attempts are accepted between the start and the end. From "
                "the freeze on, public boards and the scoreboard show the standings as of "
                "the freeze until you lift it (action 'Lift the freeze now' on the list) or "
                "the event ends; you keep seeing live standings here and in the console.",
                "fields": (
                    "starts_at",
                    "ends_at",
                    "freeze_at",
                    "freeze_lifted_at",
                    "board_visibility",
                ),
            },
        ),
        (
            "Teams",
            {
                "description": "Players form teams with an invite code (docs/teams.md).",
                "fields": ("team_size_limit",),
            },
        ),
        (
            "Budget",
            {
                "description": "What every challenge here may use together: tokens, or money "
                "at the model prices. When it is used up, challenges pause (docs/budgets.md); "
                "the dashboard shows the spend.",
                "fields": (("budget_tokens", "budget_cost"),),
            },
        ),
    )
    readonly_fields = ("created_at", "freeze_lifted_at")
    prepopulated_fields = {"slug": ("name",)}
    inlines = (BracketInline, MembershipInline)
    actions = ("lift_freeze",)

    @admin.display(description="freeze")
    def freeze_state(self, obj: Workspace) -> str:
        if obj.freeze_at is None:
            return "none"
        if obj.board_cutoff() is not None:
            return "frozen"
        if obj.freeze_lifted_at is not None:
            return "lifted"
        return "ended" if obj.ends_at and obj.ends_at <= obj.freeze_at else "scheduled"

    @admin.action(description="Lift the freeze now")
    def lift_freeze(self, request: HttpRequest, queryset) -> None:
        lifted = 0
        for workspace in queryset:
            if role_in(request, workspace.pk) not in WRITE_ROLES or workspace.freeze_at is None:
                continue
            workspace_freeze_lift(workspace=workspace)
            lifted += 1
        self.message_user(request, f"Freeze lifted on {lifted} workspace(s).", messages.SUCCESS)

    def save_model(self, request: HttpRequest, obj: Workspace, form, change: bool) -> None:
        # A new freeze time is a new freeze: a lift by hand was for the one before.
        if "freeze_at" in form.changed_data:
            obj.freeze_lifted_at = None
        super().save_model(request, obj, form, change)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        readonly = ["created_at", "freeze_lifted_at"]
        # The slug appears in URLs and API answers; only a superuser renames it.
        if obj is not None and not request.user.is_superuser:
            readonly.append("slug")
        return readonly

    def get_prepopulated_fields(self, request: HttpRequest, obj=None):
        return {} if "slug" in self.get_readonly_fields(request, obj) else self.prepopulated_fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return request.user.is_superuser or Membership.Role.OWNER in set(
                workspace_roles(request).values()
            )
        return role_in(request, obj.pk) == Membership.Role.OWNER

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser


@admin.register(EndUser)
class EndUserAdmin(WorkspaceScopedAdmin):
    # Players are written by play and sign-in; a creator only moves one to a bracket.
    list_display = (
        "external_id",
        "display_name",
        "workspace",
        "bracket",
        "account",
        "created_at",
    )
    list_filter = (("workspace", admin.RelatedOnlyFieldListFilter), "bracket")
    search_fields = ("external_id", "display_name")
    fields = ("workspace", "external_id", "display_name", "account", "bracket", "created_at")
    readonly_fields = ("workspace", "external_id", "display_name", "account", "created_at")
    list_select_related = ("workspace", "account", "bracket")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "bracket" and field is not None:
            # Only the brackets of the player's own workspace.
            object_id = request.resolver_match.kwargs.get("object_id")
            try:
                workspace_ids = list(
                    EndUser.objects.filter(pk=object_id).values_list("workspace_id", flat=True)
                )
            except (ValueError, ValidationError):
                workspace_ids = []
            field.queryset = field.queryset.filter(workspace_id__in=workspace_ids)
        return field

    def save_model(self, request: HttpRequest, obj: EndUser, form, change: bool) -> None:
        end_user_bracket_set(end_user=obj, bracket=obj.bracket)


@admin.register(PlayerProfile)
class PlayerProfileAdmin(SecretLookupGuard, admin.ModelAdmin):
    list_display = (
        "account",
        "display_name",
        "notify_on_first_blood",
        "notify_on_record_beaten",
        "notify_on_waves",
    )
    search_fields = ("display_name", "account__email")
    raw_id_fields = ("account",)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_active and request.user.is_superuser


# Django's own user admin, with the same guard on `password` (a hash, still an oracle).
admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class AccountAdmin(SecretLookupGuard, UserAdmin):
    pass
