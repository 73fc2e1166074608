"""Teams in the creators' admin, scoped to their workspaces (registered from
players.apps: players.scoping holds the scoping this module builds on)."""

from django.contrib import admin
from django.http import HttpRequest

from players.models import Team, TeamMember
from players.scoping import WorkspaceScopedAdmin, WorkspaceScopedInline
from players.teams.services import team_member_remove


class TeamMemberInline(WorkspaceScopedInline):
    model = TeamMember
    fields = ("end_user", "is_captain", "joined_at")
    readonly_fields = fields
    extra = 0
    verbose_name = "member"
    verbose_name_plural = "members (tick Delete to remove one; a removed captain hands over)"

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # players join with the team's invite code


@admin.register(Team)
class TeamAdmin(WorkspaceScopedAdmin):
    list_display = ("name", "workspace", "member_count", "created_at")
    list_filter = (("workspace", admin.RelatedOnlyFieldListFilter),)
    search_fields = ("name",)
    # The invite code is the members' to share; the admin does not show it.
    fields = ("workspace", "name", "created_at")
    readonly_fields = ("created_at",)
    inlines = (TeamMemberInline,)
    list_select_related = ("workspace",)

    @admin.display(description="members")
    def member_count(self, team: Team) -> int:
        return team.members.count()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # players form teams; creators rename, remove members or delete

    def save_formset(self, request, form, formset, change):
        if formset.model is not TeamMember:
            return super().save_formset(request, form, formset, change)
        # Removals go through the service, which hands the captaincy over.
        removed = [member_form.instance for member_form in formset.deleted_forms]
        for member in removed:
            team_member_remove(team=form.instance, end_user_id=member.end_user_id)
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], removed
