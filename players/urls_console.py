from django.urls import path

from players.api import ConsoleLoginApi

urlpatterns = [path("login", ConsoleLoginApi.as_view(), name="console-login")]
