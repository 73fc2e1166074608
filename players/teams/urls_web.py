from django.urls import path

from players.teams import api_web

urlpatterns = [
    path("teams", api_web.TeamCreateApi.as_view(), name="web-teams"),
    # Before teams/<id>, which would take "join" for an id.
    path("teams/join", api_web.TeamJoinApi.as_view(), name="web-team-join"),
    path("teams/<str:team_id>", api_web.TeamDetailApi.as_view(), name="web-team"),
    path("teams/<str:team_id>/leave", api_web.TeamLeaveApi.as_view(), name="web-team-leave"),
    path(
        "teams/<str:team_id>/invite-code",
        api_web.TeamInviteCodeApi.as_view(),
        name="web-team-invite-code",
    ),
    path(
        "teams/<str:team_id>/members/<str:end_user_id>",
        api_web.TeamMemberApi.as_view(),
        name="web-team-member",
    ),
    path("me/teams", api_web.MeTeamsApi.as_view(), name="web-me-teams"),
]
