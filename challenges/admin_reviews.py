"""The review queue in the admin (SPEC §10): a creator reads the transcript and the judges'
verdicts, and passes or fails the attempt with a reason; the audit trail for owners."""

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from challenges.models import Review, ReviewAudit
from challenges.review_subjects import pairing_reviews
from challenges.services.reviews import REASON_MAX_CHARS, review_decide
from players.models import Membership
from players.scoping import WRITE_ROLES, WorkspaceScopedAdmin, role_in


class ReviewDecisionForm(forms.ModelForm):
    outcome = forms.ChoiceField(
        label="Decision",
        choices=[
            ("pass", "Pass: the attempt is a win"),
            ("fail", "Fail: the attempt is not a win"),
        ],
        widget=forms.RadioSelect,
    )
    decision_reason = forms.CharField(
        label="Reason",
        max_length=REASON_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Kept in the audit trail; the player sees it on an appeal's outcome.",
    )

    class Meta:
        model = Review
        fields = ()


class ReviewStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("open", "Open"), ("decided", "Decided"), ("all", "All")]

    def queryset(self, request, queryset):
        wanted = self.value() or "open"
        return queryset if wanted == "all" else queryset.filter(status=wanted)

    def choices(self, changelist):
        current = self.value() or "open"
        for value, label in self.lookup_choices:
            yield {
                "selected": current == value,
                "query_string": changelist.get_query_string({self.parameter_name: value}),
                "display": label,
            }


_SHOWN = (
    "challenge",
    "player",
    "kind",
    "status",
    "verdict_now",
    "note",
    "prompt_sent",
    "reply_given",
    "judges_table",
    "decision",
    "reason",
    "decided_by",
    "decided_at",
    "created_at",
)


_ONCE_DECIDED = ("decision", "reason", "decided_by", "decided_at")


@admin.register(Review)
class ReviewAdmin(WorkspaceScopedAdmin):
    form = ReviewDecisionForm
    list_display = ("challenge", "player", "kind", "status", "decision", "created_at")
    list_filter = (ReviewStatusFilter, "kind", ("challenge", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("challenge", "attempt__end_user")
    readonly_fields = _SHOWN

    def get_queryset(self, request: HttpRequest):
        return (
            super()
            .get_queryset(request)
            .select_related(
                "challenge",
                "attempt__end_user",
                "attempt__own_text",
                "decided_by",
                "pairing__attack_submission",
                "pairing__defense_submission",
            )
        )

    def get_form(self, request, obj=None, change=False, **kwargs):
        # The two decision inputs are the form's own fields, not the model's.
        kwargs["fields"] = ()
        return super().get_form(request, obj, change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj=None):
        decided = obj is None or obj.status == Review.Status.DECIDED
        shown = _SHOWN if decided else tuple(name for name in _SHOWN if name not in _ONCE_DECIDED)
        fieldsets = [(None, {"fields": shown})]
        if obj is not None and self.has_change_permission(request, obj):
            fieldsets.append(("Decide", {"fields": ("outcome", "decision_reason")}))
        return fieldsets

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return super().has_change_permission(request, obj)
        return obj.status == Review.Status.OPEN and (
            role_in(request, obj.workspace_id) in WRITE_ROLES
        )

    def save_model(self, request, obj, form, change):
        decided = review_decide(
            review_id=obj.pk,
            actor=request.user,
            decision=form.cleaned_data["outcome"],
            reason=form.cleaned_data["decision_reason"],
        )
        obj.status, obj.decision, obj.reason = decided.status, decided.decision, decided.reason

    def log_change(self, request, obj, message):
        # The audit trail is ReviewAudit; the admin's own log entry adds nothing.
        return None

    @admin.display(description="Player")
    def player(self, obj: Review) -> str:
        if obj.kind == Review.Kind.PAIRING:
            return "red/blue pairing"
        return str(obj.attempt.end_user)

    @admin.display(description="Verdict now")
    def verdict_now(self, obj: Review) -> str:
        if obj.kind == Review.Kind.PAIRING:
            return "under review" if obj.status == Review.Status.OPEN else obj.decision
        return obj.attempt.verdict_status.replace("_", " ")

    def _transcript(self, obj: Review) -> tuple[str, str]:
        if obj.kind == Review.Kind.PAIRING:
            shown = pairing_reviews().transcript(obj)
            return f"Attack: {shown['prompt']}\n\nDefence: {shown['defense']}", shown["response"]
        attempt = obj.attempt
        if not attempt.prompt and obj.kind == Review.Kind.APPEAL:
            own = getattr(attempt, "own_text", None) if hasattr(attempt, "own_text") else None
            if own is not None:
                return own.prompt, own.response
        return attempt.prompt, attempt.response

    @admin.display(description="Prompt sent")
    def prompt_sent(self, obj: Review) -> str:
        prompt = self._transcript(obj)[0]
        return format_html('<div class="review-text">{}</div>', prompt or "—")

    @admin.display(description="Reply given")
    def reply_given(self, obj: Review) -> str:
        reply = self._transcript(obj)[1]
        return format_html('<div class="review-text">{}</div>', reply or "—")

    @admin.display(description="Judges")
    def judges_table(self, obj: Review) -> str:
        if obj.kind == Review.Kind.PAIRING:
            judges = [
                {**judge, "model": f"{judge['category']} · {judge.get('model', '')}"}
                for judge in pairing_reviews().judges(obj)
            ]
        else:
            judges = obj.attempt.judges or []
        if not judges:
            return "—"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    judge.get("model", ""),
                    "pass" if judge.get("passed") else "fail",
                    "—" if judge.get("rating") is None else judge["rating"],
                    judge.get("feedback", ""),
                )
                for judge in judges
            ),
        )
        return format_html(
            '<table class="review-judges"><thead><tr><th>Judge</th><th>Verdict</th>'
            "<th>Rating</th><th>Feedback</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )


@admin.register(ReviewAudit)
class ReviewAuditAdmin(WorkspaceScopedAdmin):
    """Every decision and reopening, for the workspace's owners only."""

    read_only = True
    list_display = ("at", "actor", "attempt", "pairing", "before", "after", "reason")
    list_select_related = ("actor",)
    fields = ("at", "actor", "attempt", "pairing", "review", "before", "after", "reason")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        owned = Membership.objects.filter(user=request.user, role=Membership.Role.OWNER)
        return queryset.filter(workspace_id__in=owned.values("workspace_id"))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser or (
            super().has_module_permission(request)
            and Membership.objects.filter(user=request.user, role=Membership.Role.OWNER).exists()
        )

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return role_in(request, obj.workspace_id) == Membership.Role.OWNER

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
