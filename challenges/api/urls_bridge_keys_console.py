from django.urls import path

from challenges.api import bridge_keys

urlpatterns = [
    path("bridge-keys", bridge_keys.BridgeKeyListCreateApi.as_view(), name="console-bridge-keys"),
    path(
        "bridge-keys/<str:key_id>",
        bridge_keys.BridgeKeyDetailApi.as_view(),
        name="console-bridge-key",
    ),
    path(
        "bridge-keys/<str:key_id>/revoke",
        bridge_keys.BridgeKeyRevokeApi.as_view(),
        name="console-bridge-key-revoke",
    ),
]
