"""Admin: the creators' event feed and their workspaces' webhook endpoints."""

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils.html import format_html

from notifications.models import Event, WebhookDelivery, WebhookEndpoint
from notifications.services import (
    webhook_endpoint_create,
    webhook_endpoint_update,
    webhook_test_send,
)
from notifications.subjects import event_subjects
from players.scoping import WorkspaceScopedAdmin
from players.selectors import workspaces_for_user


@admin.register(Event)
class EventAdmin(WorkspaceScopedAdmin):
    read_only = True
    list_display = ["type", "about", "workspace", "occurred_at"]
    list_filter = ["type"]
    fields = ["type", "workspace", "subject_id", "payload", "occurred_at", "dispatched_at"]
    readonly_fields = fields
    date_hierarchy = "occurred_at"

    def get_queryset(self, request: HttpRequest):
        return super().get_queryset(request).exclude(type=Event.Type.WEBHOOK_TEST)

    def get_changelist_instance(self, request: HttpRequest):
        # The page's events named and linked with one lookup per kind of subject.
        changelist = super().get_changelist_instance(request)
        subjects = event_subjects(changelist.result_list)
        for event in changelist.result_list:
            event.named_subject = subjects.get(event.id)
        return changelist

    @admin.display(description="About")
    def about(self, event: Event) -> str:
        subject = getattr(event, "named_subject", None)
        if subject is None:
            return event.subject_id
        return format_html('<a href="{}">{}</a>', subject.path, subject.name)


class WebhookDeliveryInline(admin.TabularInline):
    model = WebhookDelivery
    extra = 0
    can_delete = False
    fields = ["event", "status", "attempts", "last_error", "next_retry_at", "delivered_at"]
    readonly_fields = fields
    ordering = ["-created_at"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class WebhookEndpointForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        choices=[(value, label) for value, label in Event.Type.choices if value != "webhook_test"],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Event types",
        help_text="Tick the events to deliver; none ticked delivers every event.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["workspace", "url", "events", "active"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(WorkspaceScopedAdmin):
    form = WebhookEndpointForm
    list_display = ["url", "workspace", "active", "disabled_reason", "created_at"]
    fields = ["workspace", "url", "events", "active", "disabled_reason"]
    readonly_fields = ["disabled_reason"]
    inlines = [WebhookDeliveryInline]
    actions = ["send_test_event"]

    def get_queryset(self, request: HttpRequest):
        # Like secrets, endpoints are for owners and editors only.
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(workspace__in=workspaces_for_user(user=request.user, writable=True))

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            webhook_endpoint_update(
                endpoint=obj, url=data["url"], events=data["events"], active=data["active"]
            )
            return
        created = webhook_endpoint_create(
            workspace=data["workspace"],
            url=data["url"],
            events=data["events"],
            active=data["active"],
        )
        obj.pk = created.pk
        # Shown once: it is not displayed again.
        self.message_user(
            request,
            f"The endpoint's signing secret (shown only now): {created.secret}",
            messages.WARNING,
        )

    @admin.action(description="Send a test event")
    def send_test_event(self, request, queryset):
        for endpoint in queryset:
            webhook_test_send(endpoint=endpoint)
        self.message_user(request, f"Test event queued for {queryset.count()} endpoint(s).")
