"""Bounties and waves for creators (SPEC §10): `GET/POST /console/api/bounties`,
`GET/DELETE /console/api/bounties/{id}`, `GET /console/api/bounties/payouts.csv`,
`GET/POST /console/api/waves` and `GET/PATCH/DELETE /console/api/waves/{id}`, scoped to the
caller's workspaces (another workspace's row is a 404)."""

import csv
import io

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from challenges.api.console import WORKSPACE_FILTER, ConsoleApi, workspace_filter
from challenges.exports import CSV_MEDIA_TYPE, CsvExportRenderer, csv_cell
from challenges.inputs import BountyInputSerializer, WaveInputSerializer
from challenges.models import Bounty, Wave
from challenges.selectors.bounties import (
    BountyStanding,
    bounties_for_creator,
    bounty_standings,
    payouts_for,
    waves_for_creator,
)
from challenges.selectors.challenges import challenges_for_creator
from challenges.services.bounties import bounty_create, bounty_delete
from challenges.services.waves import wave_create, wave_delete, wave_update
from core.api import (
    ErrorsAsJson,
    MoneyField,
    Pagination,
    StrictSerializer,
    object_or_404,
    uuid_or_404,
    valid_uuids,
)
from core.errors import ApplicationError
from players.selectors import workspace_for_write, workspace_require_write

PAYOUT_COLUMNS = (
    "player",
    "end_user_id",
    "challenge",
    "codename",
    "kind",
    "place",
    "amount",
    "currency",
    "won_at",
    "attempt_id",
    "proof_url",
)


class BountyOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="bounty.id")
    workspace = serializers.UUIDField(source="bounty.workspace_id")
    challenge = serializers.UUIDField(source="bounty.challenge_id")
    challenge_name = serializers.CharField(source="bounty.challenge.name")
    codename = serializers.CharField(source="bounty.codename")
    kind = serializers.CharField(source="bounty.kind")
    amount = MoneyField(source="bounty.amount")
    currency = serializers.CharField(source="bounty.currency")
    cap = MoneyField(source="bounty.cap")
    label = serializers.CharField(help_text="What players read, e.g. “First break: 50 USD”")
    winners = serializers.IntegerField(help_text="Players it pays now")
    paid = MoneyField(help_text="What it owes now, in its currency")
    places_left = serializers.IntegerField(
        allow_null=True, help_text="Winners it may still pay; null: no limit"
    )
    created_at = serializers.DateTimeField(source="bounty.created_at")


def _one(bounty: Bounty) -> dict:
    return BountyOutputSerializer(bounty_standings(bounties=[bounty])[0]).data


class BountyListCreateApi(ConsoleApi):
    @extend_schema(
        parameters=[WORKSPACE_FILTER, OpenApiParameter("challenge", str)],
        responses=BountyOutputSerializer(many=True),
    )
    def get(self, request):
        workspace = workspace_filter(request)
        challenge = request.query_params.get("challenge")
        bounties = bounties_for_creator(
            user=request.user,
            workspace_id=workspace.id if workspace else None,
            challenge_id=uuid_or_404(challenge) if challenge else None,
        )
        paginator = Pagination()
        page: list[BountyStanding] = bounty_standings(
            bounties=paginator.paginate_queryset(bounties, request, view=self)
        )
        return paginator.get_paginated_response(BountyOutputSerializer(page, many=True).data)

    @extend_schema(request=BountyInputSerializer, responses={201: BountyOutputSerializer})
    def post(self, request):
        data = BountyInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        challenge = (
            challenges_for_creator(user=request.user)
            .filter(id__in=valid_uuids([fields.pop("challenge")]))
            .first()
        )
        if challenge is None:
            # Another workspace's challenge reads exactly like one that does not exist.
            raise ApplicationError(
                "No challenge of yours has that id.", fields={"challenge": ["Unknown challenge."]}
            )
        workspace_require_write(user=request.user, workspace_id=challenge.workspace_id)
        bounty = bounty_create(challenge=challenge, **fields)
        return Response(_one(bounty), status=status.HTTP_201_CREATED)


class BountyDetailApi(ConsoleApi):
    def _bounty(self, request, bounty_id) -> Bounty:
        return object_or_404(bounties_for_creator(user=request.user), bounty_id)

    @extend_schema(responses=BountyOutputSerializer)
    def get(self, request, bounty_id):
        return Response(_one(self._bounty(request, bounty_id)))

    @extend_schema(responses={204: None})
    def delete(self, request, bounty_id):
        bounty = self._bounty(request, bounty_id)
        workspace_require_write(user=request.user, workspace_id=bounty.workspace_id)
        bounty_delete(bounty=bounty)
        return Response(status=status.HTTP_204_NO_CONTENT)


class BountyPayoutsCsvApi(ErrorsAsJson, ConsoleApi):
    # Errors answer as JSON whatever was accepted; the file itself is built here.
    renderer_classes = [JSONRenderer, CsvExportRenderer]

    @extend_schema(
        parameters=[WORKSPACE_FILTER],
        responses={(200, CSV_MEDIA_TYPE): str},
        description="Every payout owed now, earliest win first: "
        + ", ".join(PAYOUT_COLUMNS)
        + ". Cells that a spreadsheet would run as a formula are quoted.",
    )
    def get(self, request):
        workspace = workspace_filter(request)
        payouts = payouts_for(
            bounties=bounties_for_creator(
                user=request.user, workspace_id=workspace.id if workspace else None
            )
        )
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(PAYOUT_COLUMNS)
        for payout in payouts:
            bounty = payout.bounty
            writer.writerow(
                [
                    csv_cell(value)
                    for value in (
                        payout.end_user.public_name,
                        str(payout.end_user.id),
                        bounty.challenge.name,
                        payout.codename,
                        bounty.kind,
                        payout.place,
                        f"{payout.amount:f}",
                        bounty.currency,
                        payout.won_at.isoformat(),
                        str(payout.attempt_id),
                        payout.proof_url,
                    )
                ]
            )
        response = HttpResponse(buffer.getvalue(), content_type=CSV_MEDIA_TYPE)
        stamp = timezone.now().strftime("%Y%m%d")
        response["Content-Disposition"] = f'attachment; filename="payouts-{stamp}.csv"'
        return response


class WaveOutputSerializer(serializers.ModelSerializer):
    workspace = serializers.UUIDField(source="workspace_id")
    challenges = serializers.SerializerMethodField()
    is_open = serializers.SerializerMethodField()

    class Meta:
        model = Wave
        fields = (
            "id",
            "workspace",
            "name",
            "challenges",
            "opens_at",
            "closes_at",
            "state",
            "is_open",
            "created_at",
        )

    def get_challenges(self, wave: Wave) -> list[str]:
        return [str(challenge.id) for challenge in wave.challenges.all()]

    def get_is_open(self, wave: Wave) -> bool:
        return wave.is_open()


class WavePatchSerializer(StrictSerializer):
    name = serializers.CharField(max_length=120, required=False)
    challenges = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=200
    )
    opens_at = serializers.DateTimeField(required=False)
    closes_at = serializers.DateTimeField(required=False)


class WaveListCreateApi(ConsoleApi):
    @extend_schema(parameters=[WORKSPACE_FILTER], responses=WaveOutputSerializer(many=True))
    def get(self, request):
        workspace = workspace_filter(request)
        waves = waves_for_creator(
            user=request.user, workspace_id=workspace.id if workspace else None
        )
        paginator = Pagination()
        page = paginator.paginate_queryset(waves, request, view=self)
        return paginator.get_paginated_response(WaveOutputSerializer(page, many=True).data)

    @extend_schema(request=WaveInputSerializer, responses={201: WaveOutputSerializer})
    def post(self, request):
        data = WaveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        workspace = workspace_for_write(user=request.user, requested=fields.pop("workspace", None))
        wave = wave_create(
            workspace=workspace,
            name=fields["name"],
            challenge_ids=fields["challenges"],
            opens_at=fields["opens_at"],
            closes_at=fields["closes_at"],
        )
        return Response(WaveOutputSerializer(wave).data, status=status.HTTP_201_CREATED)


class WaveDetailApi(ConsoleApi):
    def _wave(self, request, wave_id) -> Wave:
        return object_or_404(waves_for_creator(user=request.user), wave_id)

    @extend_schema(responses=WaveOutputSerializer)
    def get(self, request, wave_id):
        return Response(WaveOutputSerializer(self._wave(request, wave_id)).data)

    @extend_schema(request=WavePatchSerializer, responses=WaveOutputSerializer)
    def patch(self, request, wave_id):
        wave = self._wave(request, wave_id)
        workspace_require_write(user=request.user, workspace_id=wave.workspace_id)
        data = WavePatchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        wave = wave_update(
            wave=wave,
            name=fields.get("name"),
            challenge_ids=fields.get("challenges"),
            opens_at=fields.get("opens_at"),
            closes_at=fields.get("closes_at"),
        )
        return Response(WaveOutputSerializer(self._wave(request, wave.id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request, wave_id):
        wave = self._wave(request, wave_id)
        workspace_require_write(user=request.user, workspace_id=wave.workspace_id)
        wave_delete(wave=wave)
        return Response(status=status.HTTP_204_NO_CONTENT)
