"""Console API for event files: export a workspace as YAML, import one, read its schema."""

from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import parsers, serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import StrictSerializer
from core.parsers import JSONParser
from players.models import Workspace
from players.selectors import workspace_for_read, workspace_for_write, workspace_require_write
from redblue.porting.document import event_parse
from redblue.porting.exporting import event_export
from redblue.porting.importing import event_import
from redblue.porting.schema import SCHEMA_FILE

YAML_MEDIA_TYPE = "application/yaml"
# A request is parsed while a worker waits (about a second a megabyte); a bigger file goes
# through `manage.py importchallenges`, which takes four.
MAX_REQUEST_DOCUMENT_CHARS = 1024 * 1024
WORKSPACE_PARAMETER = OpenApiParameter(
    "workspace",
    str,
    description="Workspace id or slug; needed when you can write to several. 404 if not yours.",
)


def workspace_for_porting(*, user, requested: str | None) -> Workspace:
    """The workspace named (404 unless a member, 403 for a viewer: the file lists secret
    names, which viewers do not see), else the caller's only writable one."""
    if not requested:
        return workspace_for_write(user=user, requested=None)
    workspace = workspace_for_read(user=user, requested=requested)
    workspace_require_write(user=user, workspace_id=workspace.id)
    return workspace


class YamlTextParser(parsers.BaseParser):
    """A raw event file as the body (`Content-Type: application/yaml`)."""

    media_type = YAML_MEDIA_TYPE

    def parse(self, stream, media_type=None, parser_context=None) -> dict:
        raw = stream.read(MAX_REQUEST_DOCUMENT_CHARS + 1) if stream is not None else b""
        if len(raw) > MAX_REQUEST_DOCUMENT_CHARS:
            raise RequestDataTooBig()
        try:
            return {"document": raw.decode("utf-8")}
        except UnicodeDecodeError:
            raise ParseError("The body is not valid UTF-8 text.") from None


class TextYamlParser(YamlTextParser):
    media_type = "text/yaml"


class EventImportInputSerializer(StrictSerializer):
    workspace = serializers.CharField(
        required=False, help_text="Workspace id or slug (or ?workspace=)."
    )
    document = serializers.CharField(
        max_length=MAX_REQUEST_DOCUMENT_CHARS,
        trim_whitespace=False,
        help_text="The event file's YAML text, as exportchallenges writes it.",
    )
    secrets = serializers.DictField(
        child=serializers.CharField(max_length=10000, trim_whitespace=False),
        required=False,
        help_text="Secret name → value for secrets the file lists; any listed secret the "
        "workspace lacks and this leaves out gets a fresh random value.",
    )


class ImportedKindsSerializer(serializers.Serializer):
    secrets = serializers.ListField(child=serializers.CharField())
    challenges = serializers.ListField(child=serializers.CharField(), help_text="Slugs.")
    collections = serializers.ListField(child=serializers.CharField(), help_text="Slugs.")
    red_blue_challenges = serializers.ListField(child=serializers.CharField(), help_text="Names.")
    waves = serializers.ListField(child=serializers.CharField(), help_text="Names.")
    bounties = serializers.ListField(
        child=serializers.CharField(),
        help_text="“slug kind” or “slug kind (codename)”.",
    )


class EventImportOutputSerializer(serializers.Serializer):
    workspace = serializers.CharField(help_text="The workspace's slug.")
    created = ImportedKindsSerializer()
    updated = ImportedKindsSerializer()
    secrets_generated = serializers.ListField(
        child=serializers.CharField(),
        help_text="Secrets made with a random value (names only; set them in the console).",
    )


class EventExportApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="console_export",
        parameters=[WORKSPACE_PARAMETER],
        responses={(200, YAML_MEDIA_TYPE): OpenApiTypes.STR},
        description="The workspace's challenges, collections, red/blue challenges, waves, "
        "bounties, defences and themes as an event file (YAML; secrets by name only). "
        "Owners and editors.",
    )
    def get(self, request):
        workspace = workspace_for_porting(
            user=request.user, requested=request.query_params.get("workspace")
        )
        response = HttpResponse(
            event_export(workspace=workspace), content_type=f"{YAML_MEDIA_TYPE}; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="{workspace.slug}.yaml"'
        return response


class EventImportApi(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser, YamlTextParser, TextYamlParser]

    @extend_schema(
        operation_id="console_import",
        parameters=[WORKSPACE_PARAMETER],
        request={
            "application/json": EventImportInputSerializer,
            YAML_MEDIA_TYPE: OpenApiTypes.STR,
        },
        responses={
            201: EventImportOutputSerializer,
            400: OpenApiResponse(
                description="Nothing was imported; `error.fields` maps where each problem "
                'is (`challenges[2].success_pattern`) to ["line 41: …"].'
            ),
        },
        description="Create or update what the event file holds, in one transaction: any "
        "problem and nothing is written. A slug the workspace has is updated in place; one "
        "another workspace holds is refused. Owners and editors.",
    )
    def post(self, request):
        data = EventImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        workspace = workspace_for_porting(
            user=request.user,
            requested=fields.get("workspace") or request.query_params.get("workspace"),
        )
        summary = event_import(
            workspace=workspace,
            document=event_parse(fields["document"]),
            user=request.user,
            secret_values=fields.get("secrets") or {},
        )
        body = {"workspace": workspace.slug, **summary.as_dict()}
        return Response(EventImportOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class EventSchemaApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes = []

    @extend_schema(
        operation_id="console_export_schema",
        responses={(200, "application/schema+json"): OpenApiTypes.OBJECT},
        description="The JSON Schema of an event file (public).",
    )
    def get(self, request):
        return HttpResponse(
            SCHEMA_FILE.read_bytes(), content_type="application/schema+json; charset=utf-8"
        )
