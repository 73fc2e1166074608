from django.urls import path

from players.api import ConsoleLoginApi
from players.api_web import LogoutApi

urlpatterns = [
    path("login", ConsoleLoginApi.as_view(), name="console-login"),
    path("logout", LogoutApi.as_view(), name="console-logout"),
]
