from django.urls import path

from players.api_events import MyBracketsApi
from players.api_web import (
    LoginApi,
    LoginCodeSendApi,
    LoginCodeVerifyApi,
    LogoutApi,
    MeApi,
    MeLinkApi,
    MeLinkCodesApi,
    MeLinksApi,
    MeProfileApi,
    MeTokenApi,
    MeTokensApi,
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
    path("me/brackets", MyBracketsApi.as_view(), name="web-me-brackets"),
    path("me/link-codes", MeLinkCodesApi.as_view(), name="web-me-link-codes"),
    path("me/links", MeLinksApi.as_view(), name="web-me-links"),
    path("me/links/<str:end_user_id>", MeLinkApi.as_view(), name="web-me-link"),
    path("me/tokens", MeTokensApi.as_view(), name="web-me-tokens"),
    path("me/tokens/<int:token_id>", MeTokenApi.as_view(), name="web-me-token"),
]
