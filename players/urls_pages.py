from django.urls import path

from players import views

urlpatterns = [
    path("", views.profile, name="profile"),
    path("tokens", views.token_create_page, name="profile-token-create"),
    path("tokens/<int:token_id>/revoke", views.token_revoke_page, name="profile-token-revoke"),
    path("link-codes", views.link_code_create_page, name="profile-link-code-create"),
    path("brackets", views.bracket_choose_page, name="profile-bracket-choose"),
    path("links/<str:end_user_id>/undo", views.link_undo_page, name="profile-link-undo"),
]
