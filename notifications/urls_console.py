from django.urls import path

from notifications import api

urlpatterns = [
    path("events", api.EventListApi.as_view(), name="console-events"),
    path(
        "webhook-endpoints",
        api.WebhookEndpointListCreateApi.as_view(),
        name="console-webhook-endpoints",
    ),
    path(
        "webhook-endpoints/<str:endpoint_id>",
        api.WebhookEndpointDetailApi.as_view(),
        name="console-webhook-endpoint",
    ),
    path(
        "webhook-endpoints/<str:endpoint_id>/test",
        api.WebhookEndpointTestApi.as_view(),
        name="console-webhook-endpoint-test",
    ),
    path(
        "webhook-endpoints/<str:endpoint_id>/deliveries",
        api.WebhookDeliveryListApi.as_view(),
        name="console-webhook-endpoint-deliveries",
    ),
]
