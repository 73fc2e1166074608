"""Creator APIs under /console/api/: every row is scoped to the caller's workspaces."""

from django.http import HttpResponse, StreamingHttpResponse
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.api.serializers import (
    AttemptOutputSerializer,
    ChallengeOutputSerializer,
    SecretCreateSerializer,
    SecretOutputSerializer,
    SecretUpdateSerializer,
)
from challenges.break_exports import FORMATS, export_file
from challenges.exports import (
    CsvExportRenderer,
    JsonlExportRenderer,
    attempts_csv_response,
    attempts_jsonl_response,
)
from challenges.inputs import ChallengeInputSerializer, budget_fields
from challenges.models import Challenge, ChallengeAttempt, Secret
from challenges.selectors.attempts import attempts_for_challenge
from challenges.selectors.challenges import challenges_for_creator
from challenges.selectors.secrets import secrets_for_creator
from challenges.services.challenges import challenge_create, challenge_delete, challenge_update
from challenges.services.secrets import secret_create, secret_delete, secret_update
from core.api import ErrorsAsJson, object_or_404, paginated_response, uuid_or_404
from core.errors import ApplicationError
from players.inputs import workspace_kept
from players.models import Workspace
from players.selectors import workspace_for_read, workspace_for_write, workspace_require_write


class ConsoleApi(APIView):
    permission_classes = [IsAuthenticated]


WORKSPACE_FILTER = OpenApiParameter(
    "workspace", str, description="Only this workspace (id or slug); 404 if not yours"
)


def workspace_filter(request) -> Workspace | None:
    """The `?workspace=` a console list is narrowed to, or None when not given."""
    requested = request.query_params.get("workspace")
    if not requested:
        return None
    return workspace_for_read(user=request.user, requested=requested)


class ChallengeListCreateApi(ConsoleApi):
    @extend_schema(
        parameters=[
            OpenApiParameter("app_id", str),
            WORKSPACE_FILTER,
        ],
        responses=ChallengeOutputSerializer(many=True),
    )
    def get(self, request):
        workspace = workspace_filter(request)
        challenges = challenges_for_creator(
            user=request.user,
            app_id=request.query_params.get("app_id") or None,
            workspace_id=workspace.id if workspace else None,
        )
        return paginated_response(request, self, challenges, ChallengeOutputSerializer)

    @extend_schema(request=ChallengeInputSerializer, responses={201: ChallengeOutputSerializer})
    def post(self, request):
        data = ChallengeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = budget_fields(dict(data.validated_data))
        workspace = workspace_for_write(user=request.user, requested=fields.pop("workspace", None))
        challenge = challenge_create(workspace=workspace, user=request.user, **fields)
        return Response(ChallengeOutputSerializer(challenge).data, status=status.HTTP_201_CREATED)


class ChallengeDetailApi(ConsoleApi):
    def _challenge(self, request, challenge_id) -> Challenge:
        return object_or_404(challenges_for_creator(user=request.user), challenge_id)

    @extend_schema(responses=ChallengeOutputSerializer)
    def get(self, request, challenge_id):
        return Response(ChallengeOutputSerializer(self._challenge(request, challenge_id)).data)

    @extend_schema(request=ChallengeInputSerializer, responses=ChallengeOutputSerializer)
    def patch(self, request, challenge_id):
        challenge = self._challenge(request, challenge_id)
        workspace_require_write(user=request.user, workspace_id=challenge.workspace_id)
        data = ChallengeInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        fields = workspace_kept(budget_fields(dict(data.validated_data)), what="A challenge")
        challenge = challenge_update(challenge=challenge, user=request.user, **fields)
        return Response(ChallengeOutputSerializer(challenge).data)

    @extend_schema(responses={204: None})
    def delete(self, request, challenge_id):
        challenge = self._challenge(request, challenge_id)
        workspace_require_write(user=request.user, workspace_id=challenge.workspace_id)
        challenge_delete(challenge=challenge)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _optional_bool(raw: str | None, name: str) -> bool | None:
    if raw is None or raw == "":
        return None
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no"):
        return False
    raise ApplicationError(f"'{name}' must be true or false.", fields={name: ["true or false"]})


def _optional_datetime(raw: str | None, name: str):
    if not raw:
        return None
    value = parse_datetime(raw)
    if value is None:
        raise ApplicationError(
            f"'{name}' must be an ISO 8601 date-time.", fields={name: ["ISO 8601 date-time"]}
        )
    return value


class ChallengeAttemptListApi(ErrorsAsJson, ConsoleApi):
    # `Accept: text/csv` or `application/x-ndjson` asks for an export as `?format=` does.
    renderer_classes = [JSONRenderer, CsvExportRenderer, JsonlExportRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("succeeded", bool),
            OpenApiParameter(
                "near_copy", bool, description="Only (or no) wins flagged as near-copies"
            ),
            OpenApiParameter("source", str, enum=ChallengeAttempt.Source.values),
            OpenApiParameter("end_user", str),
            OpenApiParameter("since", str, description="ISO 8601"),
            OpenApiParameter("until", str, description="ISO 8601"),
            OpenApiParameter("format", str, enum=["json", "csv", "jsonl"]),
        ],
        responses=AttemptOutputSerializer(many=True),
    )
    def get(self, request, challenge_id):
        challenge = object_or_404(challenges_for_creator(user=request.user), challenge_id)
        params = request.query_params
        source = params.get("source") or None
        if source and source not in ChallengeAttempt.Source.values:
            raise ApplicationError(
                "'source' must be web, api, bridge or agent.",
                fields={"source": ["web, api, bridge or agent"]},
            )
        end_user = params.get("end_user")
        attempts = attempts_for_challenge(
            challenge=challenge,
            succeeded=_optional_bool(params.get("succeeded"), "succeeded"),
            near_copy=_optional_bool(params.get("near_copy"), "near_copy"),
            source=source,
            end_user_id=uuid_or_404(end_user) if end_user else None,
            since=_optional_datetime(params.get("since"), "since"),
            until=_optional_datetime(params.get("until"), "until"),
        )
        export = params.get("format") or request.accepted_renderer.format
        if export == "csv":
            return attempts_csv_response(attempts, filename=f"attempts-{challenge.slug}")
        if export == "jsonl":
            return attempts_jsonl_response(attempts, filename=f"attempts-{challenge.slug}")
        if export != "json":
            raise ApplicationError(
                "'format' must be json, csv or jsonl.", fields={"format": ["json, csv or jsonl"]}
            )
        return paginated_response(request, self, attempts, AttemptOutputSerializer)


class SecretListCreateApi(ConsoleApi):
    @extend_schema(parameters=[WORKSPACE_FILTER], responses=SecretOutputSerializer(many=True))
    def get(self, request):
        workspace = workspace_filter(request)
        secrets = secrets_for_creator(
            user=request.user, workspace_id=workspace.id if workspace else None
        )
        return paginated_response(request, self, secrets, SecretOutputSerializer)

    @extend_schema(request=SecretCreateSerializer, responses={201: SecretOutputSerializer})
    def post(self, request):
        data = SecretCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_for_write(
            user=request.user, requested=data.validated_data.get("workspace")
        )
        secret = secret_create(
            workspace=workspace,
            name=data.validated_data["name"],
            value=data.validated_data["value"],
        )
        return Response(SecretOutputSerializer(secret).data, status=status.HTTP_201_CREATED)


class SecretDetailApi(ConsoleApi):
    def _secret(self, request, secret_id) -> Secret:
        return object_or_404(secrets_for_creator(user=request.user), secret_id)

    @extend_schema(responses=SecretOutputSerializer)
    def get(self, request, secret_id):
        return Response(SecretOutputSerializer(self._secret(request, secret_id)).data)

    @extend_schema(request=SecretUpdateSerializer, responses=SecretOutputSerializer)
    def patch(self, request, secret_id):
        secret = self._secret(request, secret_id)
        workspace_require_write(user=request.user, workspace_id=secret.workspace_id)
        data = SecretUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        secret = secret_update(secret=secret, value=data.validated_data["value"])
        return Response(SecretOutputSerializer(secret).data)

    @extend_schema(responses={204: None})
    def delete(self, request, secret_id):
        secret = self._secret(request, secret_id)
        workspace_require_write(user=request.user, workspace_id=secret.workspace_id)
        secret_delete(secret=secret)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ChallengeBreakExportApi(ConsoleApi):
    """A challenge's breaks for promptfoo, garak and PyRIT, and its shared attempts as a
    dataset with its card (docs/exports.md). Owners and editors of its workspace only."""

    def perform_content_negotiation(self, request, force=False):
        # `format` names the export here, not a renderer; errors answer as JSON.
        renderer = JSONRenderer()
        return renderer, renderer.media_type

    @extend_schema(
        operation_id="console_challenge_export",
        parameters=[
            OpenApiParameter("format", str, enum=list(FORMATS), required=True),
        ],
        responses={
            (200, "application/yaml"): OpenApiTypes.STR,
            (200, "application/json"): OpenApiTypes.OBJECT,
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            (200, "text/markdown"): OpenApiTypes.STR,
        },
    )
    def get(self, request, challenge_id):
        challenge = object_or_404(challenges_for_creator(user=request.user), challenge_id)
        workspace_require_write(user=request.user, workspace_id=challenge.workspace_id)
        export_format = request.query_params.get("format") or ""
        if export_format not in FORMATS:
            allowed = ", ".join(FORMATS)
            raise ApplicationError(
                f"'format' must be one of: {allowed}.", fields={"format": [allowed]}
            )
        exported = export_file(challenge, export_format)
        if isinstance(exported.content, str):
            response = HttpResponse(
                exported.content, content_type=f"{exported.media_type}; charset=utf-8"
            )
        else:
            response = StreamingHttpResponse(
                exported.content, content_type=f"{exported.media_type}; charset=utf-8"
            )
        response["Content-Disposition"] = f'attachment; filename="{exported.filename}"'
        return response
