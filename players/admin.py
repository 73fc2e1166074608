"""The admin as creators use it: every row is scoped to the creator's workspaces.

A creator is a staff user with a Membership; what they may do follows the membership role
(owner, editor, viewer) rather than Django's per-model permissions, so giving someone a
workspace is all it takes. Superusers see and change everything. The scoping itself (the
base classes and role helpers every app's admin uses) is players/scoping.py.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import ValidationError
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest

from players.events import end_user_bracket_set, event_settings_check, workspace_freeze_lift
from players.models import Bracket, EndUser, Membership, PlayerProfile, Workspace
from players.scoping import (
    WRITE_ROLES,
    SecretLookupGuard,
    WorkspaceScopedAdmin,
    WorkspaceScopedInline,
    role_in,
    workspace_roles,
)

admin.site.site_header = "Prompt Hacking Challenges"
admin.site.site_title = "Prompt Hacking Challenges admin"
admin.site.index_title = "Workspaces, challenges and players"


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
