from django.urls import path

from players.api import ConsoleLoginApi
from players.api_events import (
    BracketDetailApi,
    BracketListCreateApi,
    PlayerBracketApi,
    WorkspaceSettingsApi,
)
from players.api_web import LogoutApi

urlpatterns = [
    path("login", ConsoleLoginApi.as_view(), name="console-login"),
    path("logout", LogoutApi.as_view(), name="console-logout"),
    path("workspace", WorkspaceSettingsApi.as_view(), name="console-workspace"),
    path("brackets", BracketListCreateApi.as_view(), name="console-brackets"),
    path("brackets/<str:bracket_id>", BracketDetailApi.as_view(), name="console-bracket"),
    path(
        "players/<str:end_user_id>/bracket",
        PlayerBracketApi.as_view(),
        name="console-player-bracket",
    ),
]
