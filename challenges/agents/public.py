"""What a player sees of an agent scenario's tools and slots: shared by agent challenges and
red/blue agent challenges (never a tool's result template, the win rule or benign tasks)."""

from rest_framework import serializers


class PublicAgentToolSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    parameters = serializers.DictField()


class PublicAgentSlotSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    template = serializers.CharField(help_text="Your text goes where {{text}} stands")
