from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.ratelimit import client_ip, parse_rate, rate_limit_hit
from players.auth_flows import creator_authenticate
from players.services import token_issue


class ConsoleLoginSerializer(serializers.Serializer):
    email = serializers.EmailField()
    password = serializers.CharField(max_length=200, trim_whitespace=False)


class ConsoleLoginApi(APIView):
    """Exchange a creator's email and password for a bearer token."""

    authentication_classes: list = []
    permission_classes: list = []

    @extend_schema(
        request=ConsoleLoginSerializer,
        responses=inline_serializer("ConsoleLogin", {"access_token": serializers.CharField()}),
    )
    def post(self, request):
        limit, window = parse_rate(settings.LOGIN_RATE_LIMIT)
        rate_limit_hit(
            scope="console-login", key=client_ip(request), limit=limit, window_seconds=window
        )
        data = ConsoleLoginSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = creator_authenticate(
            request=request._request,
            email=data.validated_data["email"].lower(),
            password=data.validated_data["password"],
        )
        return Response({"access_token": token_issue(user=user, name="console")})
