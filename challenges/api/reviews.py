"""Reviews, appeals and the audit trail (SPEC §10): console for creators, web for players."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.console import WORKSPACE_FILTER, workspace_filter
from challenges.api.serializers import (
    AuditOutputSerializer,
    ReviewOutputSerializer,
)
from challenges.models import Review
from challenges.selectors.reviews import audit_for_owner, reviews_for_creator
from challenges.services.reviews import (
    APPEAL_NOTE_MAX_CHARS,
    REASON_MAX_CHARS,
    attempt_appeal,
    attempt_reopen,
    review_decide,
)
from core.api import StrictSerializer, paginated_response, uuid_or_404
from core.errors import ApplicationError


class ReviewListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("status", str, enum=["open", "decided"]), WORKSPACE_FILTER],
        responses=ReviewOutputSerializer(many=True),
    )
    def get(self, request):
        wanted = request.query_params.get("status") or None
        if wanted not in (None, *Review.Status.values):
            raise ApplicationError(
                "'status' must be 'open' or 'decided'.", fields={"status": ["open or decided."]}
            )
        workspace = workspace_filter(request)
        reviews = reviews_for_creator(
            user=request.user, status=wanted, workspace_id=workspace.id if workspace else None
        )
        return paginated_response(request, self, reviews, ReviewOutputSerializer)


class ReviewDecideApi(APIView):
    permission_classes = [IsAuthenticated]

    class ReviewDecisionInputSerializer(StrictSerializer):
        decision = serializers.ChoiceField(Review.Decision.choices)
        reason = serializers.CharField(max_length=REASON_MAX_CHARS)

    @extend_schema(request=ReviewDecisionInputSerializer, responses=ReviewOutputSerializer)
    def post(self, request, review_id):
        review_id = uuid_or_404(review_id)
        data = self.ReviewDecisionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        review = review_decide(
            review_id=review_id,
            actor=request.user,
            decision=data.validated_data["decision"],
            reason=data.validated_data["reason"],
        )
        review = reviews_for_creator(user=request.user).get(id=review.id)
        return Response(ReviewOutputSerializer(review).data)


class AttemptReopenApi(APIView):
    permission_classes = [IsAuthenticated]

    class AttemptReopenInputSerializer(StrictSerializer):
        reason = serializers.CharField(max_length=REASON_MAX_CHARS)

    @extend_schema(request=AttemptReopenInputSerializer, responses={201: ReviewOutputSerializer})
    def post(self, request, attempt_id):
        attempt_id = uuid_or_404(attempt_id)
        data = self.AttemptReopenInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        review = attempt_reopen(
            attempt_id=attempt_id, actor=request.user, reason=data.validated_data["reason"]
        )
        review = reviews_for_creator(user=request.user).get(id=review.id)
        return Response(ReviewOutputSerializer(review).data, status=status.HTTP_201_CREATED)


class AuditListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(parameters=[WORKSPACE_FILTER], responses=AuditOutputSerializer(many=True))
    def get(self, request):
        workspace = workspace_filter(request)
        entries = audit_for_owner(
            user=request.user, workspace_id=workspace.id if workspace else None
        )
        return paginated_response(request, self, entries, AuditOutputSerializer)


class AppealOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    attempt_id = serializers.UUIDField()
    status = serializers.CharField()
    note = serializers.CharField()
    decision = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class AttemptAppealApi(APIView):
    permission_classes = [IsAuthenticated]

    class AppealInputSerializer(StrictSerializer):
        note = serializers.CharField(max_length=APPEAL_NOTE_MAX_CHARS)

    @extend_schema(request=AppealInputSerializer, responses={201: AppealOutputSerializer})
    def post(self, request, attempt_id):
        attempt_id = uuid_or_404(attempt_id)
        data = self.AppealInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        review = attempt_appeal(
            attempt_id=attempt_id, account=request.user, note=data.validated_data["note"]
        )
        return Response(AppealOutputSerializer(review).data, status=status.HTTP_201_CREATED)
