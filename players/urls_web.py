from django.urls import path

from players.api_web import (
    LoginApi,
    LoginCodeSendApi,
    LoginCodeVerifyApi,
    LogoutApi,
    MeApi,
    MeProfileApi,
    RegisterApi,
)

urlpatterns = [
    path("register", RegisterApi.as_view(), name="web-register"),
    path("login", LoginApi.as_view(), name="web-login"),
    path("login/email-code/send", LoginCodeSendApi.as_view(), name="web-login-code-send"),
    path("login/email-code/verify", LoginCodeVerifyApi.as_view(), name="web-login-code-verify"),
    path("logout", LogoutApi.as_view(), name="web-logout"),
    path("me", MeApi.as_view(), name="web-me"),
    path("me/profile", MeProfileApi.as_view(), name="web-me-profile"),
]
