"""Bridge keys under /console/api/bridge-keys: list, create (the key is shown once), revoke."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from challenges.api.console import WORKSPACE_FILTER, ConsoleApi, workspace_filter
from challenges.bridge.selectors import bridge_keys_for_creator
from challenges.models import BridgeKey
from challenges.services.bridge_keys import bridge_key_create, bridge_key_revoke
from core.api import object_or_404, paginated_response
from players.selectors import workspace_for_write, workspace_require_write


class BridgeKeyCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False, allow_blank=True)
    workspace = serializers.CharField(required=False, help_text="Workspace id or slug")


class BridgeKeyOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = BridgeKey
        fields = ("id", "workspace", "name", "prefix", "created_at", "last_used_at", "revoked_at")


class BridgeKeyCreatedSerializer(BridgeKeyOutputSerializer):
    key = serializers.CharField(help_text="The whole key; shown this once and never again.")

    class Meta(BridgeKeyOutputSerializer.Meta):
        fields = (*BridgeKeyOutputSerializer.Meta.fields, "key")


class BridgeKeyListCreateApi(ConsoleApi):
    @extend_schema(
        parameters=[WORKSPACE_FILTER],
        responses=BridgeKeyOutputSerializer(many=True),
    )
    def get(self, request):
        workspace = workspace_filter(request)
        keys = bridge_keys_for_creator(
            user=request.user, workspace_id=workspace.id if workspace else None
        )
        return paginated_response(request, self, keys, BridgeKeyOutputSerializer)

    @extend_schema(request=BridgeKeyCreateSerializer, responses={201: BridgeKeyCreatedSerializer})
    def post(self, request):
        data = BridgeKeyCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_for_write(
            user=request.user, requested=data.validated_data.get("workspace")
        )
        key, raw = bridge_key_create(workspace=workspace, name=data.validated_data.get("name", ""))
        key.key = raw
        return Response(BridgeKeyCreatedSerializer(key).data, status=status.HTTP_201_CREATED)


class BridgeKeyDetailApi(ConsoleApi):
    def _key(self, request, key_id) -> BridgeKey:
        key = object_or_404(bridge_keys_for_creator(user=request.user), key_id)
        workspace_require_write(user=request.user, workspace_id=key.workspace_id)
        return key

    @extend_schema(responses={204: None})
    def delete(self, request, key_id):
        bridge_key_revoke(key=self._key(request, key_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class BridgeKeyRevokeApi(BridgeKeyDetailApi):
    http_method_names = ["post", "options"]

    @extend_schema(request=None, responses=BridgeKeyOutputSerializer)
    def post(self, request, key_id):
        key = bridge_key_revoke(key=self._key(request, key_id))
        return Response(BridgeKeyOutputSerializer(key).data)
