from django.urls import path

from players.teams import views

urlpatterns = [
    path("", views.teams_page, name="teams"),
    path("create", views.team_create_page, name="team-create"),
    path("join", views.team_join_page, name="team-join"),
    path("<str:team_id>/leave", views.team_leave_page, name="team-leave"),
    path("<str:team_id>/invite-code", views.team_invite_code_page, name="team-invite-code"),
    path(
        "<str:team_id>/members/<str:end_user_id>/remove",
        views.team_member_remove_page,
        name="team-member-remove",
    ),
]
