from django.urls import path

from players.teams import api_console

urlpatterns = [
    path("teams", api_console.TeamListApi.as_view(), name="console-teams"),
    path("team-settings", api_console.TeamSettingsApi.as_view(), name="console-team-settings"),
    path("teams/<str:team_id>", api_console.TeamDetailApi.as_view(), name="console-team"),
    path(
        "teams/<str:team_id>/members/<str:end_user_id>",
        api_console.TeamMemberApi.as_view(),
        name="console-team-member",
    ),
]
