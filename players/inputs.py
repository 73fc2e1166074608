"""Input shapes other apps' console calls and event files take from players: a budget
(the workspace's, a challenge's, a player's), the `?workspace=` of a call that acts on
one workspace, and the rule that an update keeps a row in its workspace. One definition,
so every way in checks them alike."""

from decimal import Decimal

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from core.api import StrictSerializer
from core.errors import ApplicationError

WORKSPACE = OpenApiParameter(
    "workspace", str, description="Workspace id or slug; needed when you belong to several"
)


class BudgetSerializer(StrictSerializer):
    """A budget (SPEC §10 Prices and budgets): tokens, money at the model prices, or both;
    a missing or null part is no limit."""

    tokens = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=9_000_000_000_000
    )
    cost = serializers.DecimalField(
        max_digits=14,
        decimal_places=4,
        required=False,
        allow_null=True,
        min_value=Decimal("0.0001"),
        coerce_to_string=False,
    )


def budget_out(tokens, cost) -> dict | None:
    if tokens is None and cost is None:
        return None
    return {"tokens": tokens, "cost": float(cost) if cost is not None else None}


def workspace_kept(fields: dict, *, what: str) -> dict:
    """An update's `fields`, refused when they name a workspace: a row stays in the workspace
    it was created in. `what` names the row in the message ("A challenge")."""
    if "workspace" in fields:
        raise ApplicationError(
            f"{what} cannot move to another workspace.",
            fields={"workspace": ["Read-only after creation."]},
        )
    return fields
