from django.urls import path

from players import views

urlpatterns = [
    path("", views.profile, name="profile"),
    path("tokens/<int:token_id>/revoke", views.token_revoke_page, name="profile-token-revoke"),
]
