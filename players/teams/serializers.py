"""How a team is shown over the APIs. The invite code goes to the team's members only."""

from django.contrib.auth.models import AbstractBaseUser
from rest_framework import serializers

from core.api import StrictSerializer
from players.models import Team
from players.teams.selectors import team_has_member


class TeamMemberOutputSerializer(serializers.Serializer):
    end_user_id = serializers.UUIDField()
    name = serializers.CharField(source="end_user.public_name")
    is_captain = serializers.BooleanField()
    joined_at = serializers.DateTimeField()


class TeamOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    workspace = serializers.CharField(source="workspace.slug")
    size_limit = serializers.IntegerField(source="workspace.team_size_limit")
    members = TeamMemberOutputSerializer(many=True, source="members.all")
    is_member = serializers.SerializerMethodField(help_text="Whether you are in this team")
    invite_code = serializers.CharField(
        required=False, help_text="Only in answers to the team's own members"
    )
    created_at = serializers.DateTimeField()

    def get_is_member(self, team: Team) -> bool:
        return team_has_member(team=team, account=self.context["viewer"])

    def to_representation(self, team: Team) -> dict:
        data = super().to_representation(team)
        if not data["is_member"]:
            del data["invite_code"]
        return data


def team_data(team: Team, *, viewer: AbstractBaseUser) -> dict:
    return TeamOutputSerializer(team, context={"viewer": viewer}).data


class ConsoleTeamOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    workspace = serializers.CharField(source="workspace.slug")
    members = TeamMemberOutputSerializer(many=True, source="members.all")
    created_at = serializers.DateTimeField()


class TeamSettingsSerializer(StrictSerializer):
    workspace = serializers.CharField(source="slug", read_only=True)
    team_size_limit = serializers.IntegerField(
        min_value=0, max_value=100, help_text="Most players in one team; 0 turns teams off"
    )
