from django.contrib import admin
from django.db import models
from django.utils.html import format_html_join

from core.parsers import CheckedJSONDecoder
from redblue.models import ArenaChallengeType, ArenaMessage, ArenaSession, ArenaUser, ScoringEntry
from redblue.teams import admin as teams_admin  # noqa: F401 - registers the team admins


@admin.register(ArenaChallengeType)
class ArenaChallengeTypeAdmin(admin.ModelAdmin):
    formfield_overrides = {models.JSONField: {"decoder": CheckedJSONDecoder}}
    list_display = ("name", "enabled", "created_at")
    list_editable = ("enabled",)
    search_fields = ("name",)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Games and scores are written by play alone; the admin only shows them."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ArenaSession)
class ArenaSessionAdmin(ReadOnlyAdmin):
    list_display = ("id", "challenge_type", "status", "created_at", "completed_at")
    list_filter = ("status", "challenge_type")
    readonly_fields = (
        "id",
        "challenge_type",
        "status",
        "created_at",
        "completed_at",
        "players",
        "player_identities",
        "scores",
        "attributions",
        "transcript",
    )
    exclude = ("game_state", "invites", "operator_next_index", "chat_next_index", "name")

    @admin.display(description="Transcript")
    def transcript(self, session):
        messages = ArenaMessage.objects.filter(session=session).order_by("timestamp_ms", "pk")
        return format_html_join(
            "",
            "<p><code>{}</code> <strong>{}</strong>{} {}</p>",
            (
                (m.channel, m.sender, f" → {m.recipient}" if m.recipient else "", m.content)
                for m in messages
            ),
        )


@admin.register(ScoringEntry)
class ScoringEntryAdmin(ReadOnlyAdmin):
    list_display = ("player_id", "challenge_type", "strategy", "games_played", "metrics")
    list_filter = ("strategy", "challenge_type")
    search_fields = ("player_id",)
    exclude = ("state",)


@admin.register(ArenaUser)
class ArenaUserAdmin(admin.ModelAdmin):
    list_display = ("user_id", "username", "model", "account")
    search_fields = ("user_id", "username")
    readonly_fields = ("user_id", "account", "created_at", "updated_at")

    def has_add_permission(self, request, obj=None):
        # An arena user is the hash of a player's public key, made when the player first
        # plays; the admin only renames one (an added one had no id, and a second failed).
        return False
