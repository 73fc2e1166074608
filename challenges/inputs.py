"""Input shapes a creator's writes take both through the console API and in an event file
(redblue/porting/): one definition for both, so an import checks a row as the console does."""

from rest_framework import serializers

from challenges.models import Bounty
from core.api import StrictSerializer


class BountyInputSerializer(StrictSerializer):
    challenge = serializers.CharField(help_text="The challenge's id")
    codename = serializers.CharField(
        max_length=40,
        required=False,
        allow_blank=True,
        help_text="Several targets: only breaks of this codename earn it",
    )
    kind = serializers.ChoiceField(Bounty.Kind.values)
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.RegexField(
        r"^[A-Z]{3}$", required=False, help_text="ISO 4217 code, USD when left out"
    )
    cap = serializers.DecimalField(
        max_digits=14,
        decimal_places=2,
        required=False,
        allow_null=True,
        help_text="per_break: the most paid in total; fastest_n: how many winners",
    )


class WaveInputSerializer(StrictSerializer):
    workspace = serializers.CharField(
        required=False, help_text="Workspace id or slug; needed when you belong to several."
    )
    name = serializers.CharField(max_length=120)
    challenges = serializers.ListField(
        child=serializers.CharField(max_length=64), help_text="Challenge ids", max_length=200
    )
    opens_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField()
