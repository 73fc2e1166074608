"""The arena API, included twice by config/urls.py: under /api/ and /api/v1/."""

from django.urls import path, re_path

from redblue.arena import api, sse

urlpatterns = [
    path("metadata", api.metadata_list),
    path("metadata/<str:name>", api.metadata_detail),
    path("challenges", api.sessions_list),
    path("challenges/<str:name>", api.sessions_of_type),
    path("arena/join", api.arena_join),
    path("arena/message", api.arena_message),
    path("arena/sync", api.arena_sync),
    path("invites", api.invite_claim),
    path("invites/<str:invite>", api.invite_detail),
    path("chat/send", api.chat_send),
    path("chat/sync", api.chat_sync),
    path("chat/ws/<str:channel>", sse.chat_stream),
    path("scoring", api.scoring_global),
    path("scoring/<str:name>", api.scoring_of_type),
    path("stats", api.stats),
    path("users", api.users),
    path("users/batch", api.users_batch),
    path("users/<str:user_id>", api.user_detail),
    path("users/<str:user_id>/challenges", api.user_sessions),
    path("users/<str:user_id>/scores", api.user_scores),
    # Unknown arena paths answer in the arena's JSON shape; the OpenAPI pages keep their own.
    re_path(r"^(?!schema/?$|docs/?$)(?P<path>.*)$", api.not_found),
]
