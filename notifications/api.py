"""Console APIs under /console/api/: `events` and `webhook-endpoints`, scoped to the caller's
workspaces like every console resource."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import object_or_404, paginated_response
from notifications.models import Event, WebhookDelivery, WebhookEndpoint
from notifications.selectors import (
    events_for_creator,
    webhook_deliveries_for_endpoint,
    webhook_endpoints_for_creator,
)
from notifications.services import (
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_update,
    webhook_test_send,
)
from players.selectors import workspace_for_read, workspace_for_write, workspace_require_write

EVENT_TYPES = [choice for choice in Event.Type.values if choice != Event.Type.WEBHOOK_TEST]
WORKSPACE_FILTER = OpenApiParameter(
    "workspace", str, description="Only this workspace (id or slug); 404 if not yours"
)


class EventOutputSerializer(serializers.ModelSerializer):
    workspace = serializers.UUIDField(source="workspace_id")

    class Meta:
        model = Event
        fields = ["id", "type", "workspace", "payload", "occurred_at"]


class WebhookEndpointOutputSerializer(serializers.ModelSerializer):
    workspace = serializers.UUIDField(source="workspace_id")

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "workspace", "url", "events", "active", "disabled_reason", "created_at"]


class WebhookEndpointCreatedSerializer(WebhookEndpointOutputSerializer):
    """Only the answer to a create carries the secret: it is shown once."""

    class Meta(WebhookEndpointOutputSerializer.Meta):
        fields = [*WebhookEndpointOutputSerializer.Meta.fields, "secret"]


class WebhookEndpointInputSerializer(serializers.Serializer):
    workspace = serializers.CharField(required=False)
    url = serializers.URLField(max_length=2000)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_TYPES), required=False, default=list
    )
    active = serializers.BooleanField(required=False, default=True)


class WebhookEndpointUpdateSerializer(serializers.Serializer):
    url = serializers.URLField(max_length=2000, required=False)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_TYPES), required=False
    )
    active = serializers.BooleanField(required=False)


class WebhookDeliveryOutputSerializer(serializers.ModelSerializer):
    webhook_id = serializers.SerializerMethodField()
    event_type = serializers.CharField(source="event.type")

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "webhook_id",
            "event",
            "event_type",
            "status",
            "attempts",
            "last_error",
            "next_retry_at",
            "created_at",
            "delivered_at",
        ]

    def get_webhook_id(self, delivery) -> str:
        return f"msg_{delivery.pk.hex}"


class ConsoleApi(APIView):
    permission_classes = [IsAuthenticated]


def _workspace_id(request):
    requested = request.query_params.get("workspace")
    if not requested:
        return None
    return workspace_for_read(user=request.user, requested=requested).id


class EventListApi(ConsoleApi):
    @extend_schema(
        parameters=[WORKSPACE_FILTER, OpenApiParameter("type", str, enum=EVENT_TYPES)],
        responses=EventOutputSerializer(many=True),
    )
    def get(self, request):
        events = events_for_creator(
            user=request.user,
            workspace_id=_workspace_id(request),
            type=request.query_params.get("type") or None,
        )
        return paginated_response(request, self, events, EventOutputSerializer)


class WebhookEndpointListCreateApi(ConsoleApi):
    @extend_schema(
        parameters=[WORKSPACE_FILTER], responses=WebhookEndpointOutputSerializer(many=True)
    )
    def get(self, request):
        endpoints = webhook_endpoints_for_creator(
            user=request.user, workspace_id=_workspace_id(request)
        )
        return paginated_response(request, self, endpoints, WebhookEndpointOutputSerializer)

    @extend_schema(
        request=WebhookEndpointInputSerializer, responses={201: WebhookEndpointCreatedSerializer}
    )
    def post(self, request):
        data = WebhookEndpointInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_for_write(
            user=request.user, requested=data.validated_data.get("workspace")
        )
        endpoint = webhook_endpoint_create(
            workspace=workspace,
            url=data.validated_data["url"],
            events=data.validated_data["events"],
            active=data.validated_data["active"],
        )
        return Response(
            WebhookEndpointCreatedSerializer(endpoint).data, status=status.HTTP_201_CREATED
        )


class WebhookEndpointDetailApi(ConsoleApi):
    def _endpoint(self, request, endpoint_id) -> WebhookEndpoint:
        endpoint = object_or_404(webhook_endpoints_for_creator(user=request.user), endpoint_id)
        workspace_require_write(user=request.user, workspace_id=endpoint.workspace_id)
        return endpoint

    @extend_schema(responses=WebhookEndpointOutputSerializer)
    def get(self, request, endpoint_id):
        return Response(WebhookEndpointOutputSerializer(self._endpoint(request, endpoint_id)).data)

    @extend_schema(
        request=WebhookEndpointUpdateSerializer, responses=WebhookEndpointOutputSerializer
    )
    def patch(self, request, endpoint_id):
        endpoint = self._endpoint(request, endpoint_id)
        data = WebhookEndpointUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        endpoint = webhook_endpoint_update(endpoint=endpoint, **data.validated_data)
        return Response(WebhookEndpointOutputSerializer(endpoint).data)

    @extend_schema(responses={204: None})
    def delete(self, request, endpoint_id):
        webhook_endpoint_delete(endpoint=self._endpoint(request, endpoint_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookEndpointTestApi(ConsoleApi):
    @extend_schema(request=None, responses={202: WebhookDeliveryOutputSerializer})
    def post(self, request, endpoint_id):
        endpoint = WebhookEndpointDetailApi()._endpoint(request, endpoint_id)
        delivery = webhook_test_send(endpoint=endpoint)
        return Response(
            WebhookDeliveryOutputSerializer(delivery).data, status=status.HTTP_202_ACCEPTED
        )


class WebhookDeliveryListApi(ConsoleApi):
    @extend_schema(responses=WebhookDeliveryOutputSerializer(many=True))
    def get(self, request, endpoint_id):
        endpoint = WebhookEndpointDetailApi()._endpoint(request, endpoint_id)
        deliveries = webhook_deliveries_for_endpoint(endpoint=endpoint)
        return paginated_response(request, self, deliveries, WebhookDeliveryOutputSerializer)
