"""The players' auth and profile API under /web/api/ (SPEC §5)."""

from django.contrib.auth import logout
from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import ApplicationError
from players import auth_flows
from players.link_codes import end_user_unlink, link_code_create
from players.models import ApiToken
from players.selectors import (
    linked_identities_for_account,
    profile_for_account,
    tokens_for_account,
    workspace_for_linking,
)
from players.services import profile_update, token_create, token_issue, token_revoke

_PASSWORD_MAX = 200


class PlayerOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    email = serializers.EmailField()
    display_name = serializers.CharField()
    avatar_url = serializers.CharField()
    notify_on_first_blood = serializers.BooleanField()
    notify_on_record_beaten = serializers.BooleanField()
    notify_on_waves = serializers.BooleanField()
    interface_language = serializers.CharField()
    share_attempts = serializers.BooleanField(
        help_text="The player's attempts go into public dataset exports (docs/exports.md)."
    )


class AuthOutputSerializer(serializers.Serializer):
    access_token = serializers.CharField()
    player = PlayerOutputSerializer()


def player_data(account: AbstractBaseUser) -> dict:
    profile = profile_for_account(account=account)
    return PlayerOutputSerializer(
        {
            "id": account.pk,
            "email": account.email,
            **profile.editable_values(),
        }
    ).data


def _auth_response(account: AbstractBaseUser, *, status_code: int = status.HTTP_200_OK):
    token = token_issue(user=account, name="web")
    return Response({"access_token": token, "player": player_data(account)}, status=status_code)


class _PublicApi(APIView):
    # No session auth, so no CSRF check: these answer with a token and set no session.
    authentication_classes: list = []
    permission_classes: list = []


class RegisterApi(_PublicApi):
    class RegisterInputSerializer(serializers.Serializer):
        email = serializers.EmailField()
        name = serializers.CharField(max_length=150)
        password = serializers.CharField(
            max_length=_PASSWORD_MAX, trim_whitespace=False, required=False
        )
        code = serializers.CharField(
            max_length=64,
            required=False,
            help_text="Instead of a password: the code POST …/login/email-code/send mailed",
        )

        def to_internal_value(self, data):
            # Reported with the other fields' problems, so one answer names them all.
            given = data if isinstance(data, dict) else {}
            sent = {name for name in ("password", "code") if given.get(name) not in (None, "")}
            choice = (
                {} if len(sent) == 1 else {"password": ["Send a password or the emailed 'code'."]}
            )
            try:
                value = super().to_internal_value(data)
            except serializers.ValidationError as error:
                raise serializers.ValidationError({**choice, **error.detail}) from None
            if choice:
                raise serializers.ValidationError(choice)
            return value

    @extend_schema(
        request=RegisterInputSerializer,
        responses={
            201: AuthOutputSerializer,
            202: inline_serializer("SignupMailSent", {"detail": serializers.CharField()}),
        },
    )
    def post(self, request):
        data = self.RegisterInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if "code" in data.validated_data:
            account = auth_flows.account_register_by_code(
                request=request._request, **data.validated_data
            )
            return _auth_response(account, status_code=status.HTTP_201_CREATED)
        account = auth_flows.account_register(request=request._request, **data.validated_data)
        if account is None:
            # The same answer for a new and a taken address (ACCOUNT_PREVENT_ENUMERATION).
            return Response(
                {"detail": "We have sent a mail to this address. Log in to get a token."},
                status=status.HTTP_202_ACCEPTED,
            )
        return _auth_response(account, status_code=status.HTTP_201_CREATED)


class LoginApi(_PublicApi):
    class LoginInputSerializer(serializers.Serializer):
        email = serializers.EmailField()
        password = serializers.CharField(max_length=_PASSWORD_MAX, trim_whitespace=False)

    @extend_schema(request=LoginInputSerializer, responses=AuthOutputSerializer)
    def post(self, request):
        data = self.LoginInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        account = auth_flows.account_login(request=request._request, **data.validated_data)
        return _auth_response(account)


class LoginCodeSendApi(_PublicApi):
    class LoginCodeSendInputSerializer(serializers.Serializer):
        email = serializers.EmailField()

    @extend_schema(
        request=LoginCodeSendInputSerializer,
        responses={
            202: inline_serializer(
                "LoginCodeSent",
                {"detail": serializers.CharField(), "expires_in": serializers.IntegerField()},
            )
        },
    )
    def post(self, request):
        data = self.LoginCodeSendInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        expires_in = auth_flows.login_code_send(
            request=request._request, email=data.validated_data["email"]
        )
        return Response(
            {
                "detail": "If an account uses this address, a login code is on its way.",
                "expires_in": expires_in,
            },
            status=status.HTTP_202_ACCEPTED,
        )


class LoginCodeVerifyApi(_PublicApi):
    class LoginCodeVerifyInputSerializer(serializers.Serializer):
        email = serializers.EmailField()
        code = serializers.CharField(max_length=64)

    @extend_schema(request=LoginCodeVerifyInputSerializer, responses=AuthOutputSerializer)
    def post(self, request):
        data = self.LoginCodeVerifyInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        account = auth_flows.login_code_verify(request=request._request, **data.validated_data)
        return _auth_response(account)


class LogoutApi(APIView):
    """Revoke the bearer token the request came with (a session is logged out instead)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def post(self, request):
        if isinstance(request.auth, ApiToken):
            token_revoke(user=request.user, token_id=request.auth.pk)
        else:
            logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=PlayerOutputSerializer)
    def get(self, request):
        return Response(player_data(request.user))


class MeProfileApi(APIView):
    permission_classes = [IsAuthenticated]

    class ProfilePatchInputSerializer(serializers.Serializer):
        display_name = serializers.CharField(max_length=500, required=False, allow_blank=True)
        avatar_url = serializers.CharField(max_length=2000, required=False, allow_blank=True)
        notify_on_first_blood = serializers.BooleanField(required=False)
        notify_on_record_beaten = serializers.BooleanField(required=False)
        notify_on_waves = serializers.BooleanField(required=False)
        interface_language = serializers.CharField(max_length=20, required=False, allow_blank=True)
        share_attempts = serializers.BooleanField(required=False)

    @extend_schema(request=ProfilePatchInputSerializer, responses=PlayerOutputSerializer)
    def patch(self, request):
        data = self.ProfilePatchInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        profile_update(account=request.user, **data.validated_data)
        return Response(player_data(request.user))


class LinkCodeOutputSerializer(serializers.Serializer):
    code = serializers.CharField()
    expires_at = serializers.DateTimeField()
    workspace = serializers.CharField(source="workspace.slug")


class LinkedIdentityOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    workspace = serializers.CharField(source="workspace.slug")
    dify_user = serializers.CharField(source="external_id")
    linked_at = serializers.DateTimeField()


class MeLinkCodesApi(APIView):
    permission_classes = [IsAuthenticated]

    class LinkCodeInputSerializer(serializers.Serializer):
        workspace = serializers.CharField(max_length=100, required=False, allow_blank=True)

    @extend_schema(request=LinkCodeInputSerializer, responses={201: LinkCodeOutputSerializer})
    def post(self, request):
        data = self.LinkCodeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_for_linking(requested=data.validated_data.get("workspace", ""))
        issued = link_code_create(account=request.user, workspace=workspace)
        # Shown once: only the code's hash is kept.
        return Response(
            LinkCodeOutputSerializer(issued).data,
            status=status.HTTP_201_CREATED,
            headers={"Cache-Control": "no-store"},
        )


class MeLinksApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=LinkedIdentityOutputSerializer(many=True))
    def get(self, request):
        linked = linked_identities_for_account(account=request.user)
        return Response(LinkedIdentityOutputSerializer(linked, many=True).data)


class MeLinkApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, end_user_id: str):
        end_user_unlink(account=request.user, end_user_id=end_user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(allow_blank=True)
    agent = serializers.BooleanField(help_text="Attempts made with it rank on ?players=agents")
    prefix = serializers.CharField(help_text="The token's first characters, to tell it apart")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField()


class TokenCreatedSerializer(TokenOutputSerializer):
    access_token = serializers.CharField(help_text="Shown once: send it as Bearer")


class MeTokensApi(APIView):
    """The caller's API tokens (SPEC §9 Agents): list them, or create one, for a script or
    for an agent whose attempts rank on the agents' boards."""

    permission_classes = [IsAuthenticated]

    class TokenInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)
        agent = serializers.BooleanField(default=False)

    @extend_schema(responses=TokenOutputSerializer(many=True))
    def get(self, request):
        tokens = tokens_for_account(account=request.user)
        return Response(TokenOutputSerializer(tokens, many=True).data)

    @extend_schema(request=TokenInputSerializer, responses={201: TokenCreatedSerializer})
    def post(self, request):
        data = self.TokenInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if getattr(request.auth, "agent", False):
            # Else an agent could mint itself a person's token and play on their boards.
            raise ApplicationError(
                "An agent's token cannot create tokens; sign in as yourself to make one.",
                code="agent_token",
                status=403,
            )
        token, raw = token_create(
            user=request.user,
            name=data.validated_data["name"],
            agent=data.validated_data["agent"],
        )
        body = TokenCreatedSerializer({**TokenOutputSerializer(token).data, "access_token": raw})
        return Response(
            body.data, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"}
        )


class MeTokenApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, token_id: int):
        token_revoke(user=request.user, token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
