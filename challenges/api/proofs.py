"""Signed proofs of wins, public (SPEC §10): a proof by id, and every workspace's keys."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from challenges.proofs import ALGORITHM
from challenges.selectors.proofs import proof_keys_published
from challenges.services.proofs import proof_download, proof_for_id


class ProofDetailApi(APIView):
    """A win's proof, as anyone may download it and verify it offline."""

    # Public: a stale or foreign token must not turn a proof into a 401.
    authentication_classes: list = []

    class ProofOutputSerializer(serializers.Serializer):
        proof = serializers.DictField(help_text="The signed document (SPEC §10).")
        signature = serializers.CharField(
            help_text="Base64 of the Ed25519 signature over the canonical JSON of `proof`."
        )
        key_id = serializers.CharField()

    @extend_schema(responses={200: ProofOutputSerializer})
    def get(self, request, proof_id):
        return Response(proof_download(proof_for_id(proof_id=proof_id)))


class ProofKeySerializer(serializers.Serializer):
    key_id = serializers.CharField()
    alg = serializers.CharField()
    public_key = serializers.CharField(help_text="Base64 of the raw 32-byte Ed25519 key.")
    workspace = serializers.CharField(help_text="The slug of the workspace it signs for.")
    current = serializers.BooleanField(help_text="False once rotated out; still valid.")


class ProofKeysApi(APIView):
    """Every workspace's proof-signing keys, retired ones included."""

    authentication_classes: list = []

    class ProofKeysOutputSerializer(serializers.Serializer):
        keys = ProofKeySerializer(many=True)

    @extend_schema(responses={200: ProofKeysOutputSerializer})
    def get(self, request):
        keys = [
            {
                "key_id": key.key_id,
                "alg": ALGORITHM,
                "public_key": key.public_key,
                "workspace": key.workspace.slug,
                "current": key.retired_at is None,
            }
            for key in proof_keys_published()
        ]
        return Response(self.ProofKeysOutputSerializer({"keys": keys}).data)
