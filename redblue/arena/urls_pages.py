from django.urls import path

from redblue.arena import views

urlpatterns = [
    path("", views.arena_home, name="arena-home"),
    path("new/<str:type_name>/", views.arena_create, name="arena-create"),
    path("join/<str:invite>/", views.arena_join, name="arena-join"),
    path("<uuid:session_id>/", views.arena_session_page, name="arena-session"),
    path("<uuid:session_id>/send/", views.arena_send, name="arena-send"),
]
