"""Prices and spend for creators (SPEC §10 Prices and budgets): `GET/POST
/console/api/model-prices` and `GET /console/api/spend`, scoped to the caller's workspaces."""

from decimal import Decimal

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response

from challenges.api.console import WORKSPACE_FILTER, ConsoleApi, workspace_filter
from challenges.models import ModelPrice
from challenges.selectors.spend import Budget, workspace_spend
from challenges.services.budgets import model_price_set
from core.api import MoneyField, StrictSerializer, paginated_response
from players.inputs import WORKSPACE
from players.selectors import workspace_for_write, workspace_of_member, workspaces_for_user


class ModelPriceSerializer(serializers.ModelSerializer):
    workspace = serializers.UUIDField(source="workspace_id")
    input_per_1k = MoneyField()
    output_per_1k = MoneyField()

    class Meta:
        model = ModelPrice
        fields = ("id", "workspace", "model", "input_per_1k", "output_per_1k", "currency")


class ModelPriceInputSerializer(StrictSerializer):
    workspace = serializers.CharField(
        required=False, help_text="Workspace id or slug; needed when you belong to several."
    )
    model = serializers.CharField(
        max_length=200,
        help_text="A challenge's target_model (or its target, e.g. offline), or a judge's "
        "provider/model",
    )
    input_per_1k = serializers.DecimalField(
        max_digits=12, decimal_places=6, min_value=Decimal(0), max_value=Decimal(1_000_000)
    )
    output_per_1k = serializers.DecimalField(
        max_digits=12, decimal_places=6, min_value=Decimal(0), max_value=Decimal(1_000_000)
    )
    currency = serializers.RegexField(
        r"^[A-Z]{3}$", required=False, help_text="ISO 4217 code, USD when left out"
    )


class ModelPriceListCreateApi(ConsoleApi):
    @extend_schema(parameters=[WORKSPACE_FILTER], responses=ModelPriceSerializer(many=True))
    def get(self, request):
        workspace = workspace_filter(request)
        prices = ModelPrice.objects.filter(
            workspace__in=[workspace] if workspace else workspaces_for_user(user=request.user)
        ).order_by("model", "id")
        return paginated_response(request, self, prices, ModelPriceSerializer)

    @extend_schema(
        request=ModelPriceInputSerializer,
        responses={200: ModelPriceSerializer, 201: ModelPriceSerializer},
    )
    def post(self, request):
        """Set a model's price in the workspace: 201 when new, 200 when it replaced one."""
        data = ModelPriceInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        workspace = workspace_for_write(user=request.user, requested=fields.pop("workspace", None))
        price, created = model_price_set(
            workspace=workspace,
            model=fields["model"].strip(),
            input_per_1k=fields["input_per_1k"],
            output_per_1k=fields["output_per_1k"],
            currency=fields.get("currency", "USD"),
        )
        return Response(
            ModelPriceSerializer(price).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class BudgetOutSerializer(serializers.Serializer):
    tokens = serializers.IntegerField(allow_null=True)
    cost = MoneyField()


class UsedSerializer(serializers.Serializer):
    tokens = serializers.IntegerField(help_text="Everything used: the targets' and the judges'")
    cost = MoneyField()
    judge_tokens = serializers.IntegerField(help_text="The LLM judges' part of `tokens`")
    judge_cost = MoneyField(help_text="The LLM judges' part of `cost`")


class ChallengeSpendSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="challenge.id")
    name = serializers.CharField(source="challenge.name")
    budget = serializers.SerializerMethodField()
    player_budget = serializers.SerializerMethodField()
    spent = UsedSerializer()
    players_spent_out = serializers.IntegerField(
        help_text="Players who have used their own budget here"
    )
    share = serializers.IntegerField(allow_null=True, help_text="Percent of the budget used")
    paused = serializers.BooleanField()

    @extend_schema_field(BudgetOutSerializer(allow_null=True))
    def get_budget(self, row) -> dict | None:
        return _budget(row.budget)

    @extend_schema_field(BudgetOutSerializer(allow_null=True))
    def get_player_budget(self, row) -> dict | None:
        return _budget(row.player_budget)


def _budget(budget: Budget) -> dict | None:
    return BudgetOutSerializer(budget).data if budget.is_set else None


class SpendSerializer(serializers.Serializer):
    workspace = serializers.UUIDField(source="workspace.id")
    budget = serializers.SerializerMethodField()
    spent = UsedSerializer()
    share = serializers.IntegerField(allow_null=True)
    paused = serializers.BooleanField()
    challenges = ChallengeSpendSerializer(many=True)

    @extend_schema_field(BudgetOutSerializer(allow_null=True))
    def get_budget(self, report) -> dict | None:
        return _budget(report.budget)


class SpendApi(ConsoleApi):
    @extend_schema(parameters=[WORKSPACE], responses=SpendSerializer)
    def get(self, request):
        """Spend against the workspace's budget and each challenge's, as recorded so far."""
        workspace = workspace_of_member(
            user=request.user, requested=request.query_params.get("workspace")
        )
        return Response(SpendSerializer(workspace_spend(workspace=workspace)).data)
