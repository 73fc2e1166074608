"""Who is calling the bridge: a workspace bridge key, sent as a Bearer or used to sign.

A signed call (Standard Webhooks) names no key, so it must name its workspace, in an
`X-Workspace` header or a `workspace` query parameter (id or slug); every live key of
that workspace is then tried.
"""

import uuid

from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from challenges.bridge import signatures
from challenges.bridge.limits import key_use_due
from challenges.models import BridgeKey
from players.models import Workspace

SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


class BridgeAuthenticationFailed(exceptions.AuthenticationFailed):
    pass


def _refuse(message: str, code: str = "authentication_failed"):
    return BridgeAuthenticationFailed(message, code=code)


def key_for_bearer(raw: str) -> BridgeKey | None:
    return (
        BridgeKey.objects.filter(key_hash=signatures.key_hash(raw), revoked_at__isnull=True)
        .select_related("workspace")
        .first()
    )


def _workspace_named(ref: str) -> Workspace | None:
    try:
        return Workspace.objects.filter(id=uuid.UUID(ref)).first()
    except ValueError:
        return Workspace.objects.filter(slug=ref).first()


def key_for_signature(*, workspace_ref: str, body: bytes, headers: dict[str, str]) -> BridgeKey:
    workspace = _workspace_named(workspace_ref) if workspace_ref else None
    if workspace is None:
        raise _refuse(
            "A signed call must name its workspace (id or slug) in an X-Workspace header "
            "or a 'workspace' query parameter."
        )
    keys = BridgeKey.objects.filter(workspace=workspace, revoked_at__isnull=True).exclude(
        secret_encrypted=""
    )
    stale = None
    for key in keys:
        raw = signatures.key_decrypt(key.secret_encrypted)
        if raw is None:
            continue
        try:
            signatures.signature_verify(raw_key=raw, body=body, headers=headers)
        except signatures.SignatureError as exc:
            if "timestamp" in str(exc).lower():
                stale = str(exc)
            continue
        key.workspace = workspace
        break
    else:
        if stale:
            raise _refuse(
                f"{stale}: webhook-timestamp must be within 5 minutes of now.", code="stale"
            )
        raise _refuse("No live bridge key of this workspace signed this body.")
    # Remembered only once the signature holds, so nobody can burn someone else's ids.
    seen_key = f"bridge:webhook-id:{workspace.id}:{headers['webhook-id']}"
    if not cache.add(seen_key, 1, timeout=signatures.SEEN_ID_SECONDS):
        raise _refuse("This webhook-id was already delivered; send a new one.", code="replayed")
    return key


def _mark_used(key: BridgeKey) -> None:
    now = timezone.now()
    if key_use_due(key.last_used_at, now):
        BridgeKey.objects.filter(pk=key.pk).update(last_used_at=now)


class BridgeKeyAuthentication(authentication.BaseAuthentication):
    """Sets request.auth to the BridgeKey; request.user stays anonymous."""

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() == "bearer" and credentials.strip():
            key = key_for_bearer(credentials.strip())
            if key is None:
                raise _refuse("Unknown or revoked bridge key.")
        elif request.headers.get("webhook-signature"):
            headers = {name: request.headers.get(name, "") for name in SIGNATURE_HEADERS}
            if not all(headers.values()):
                raise _refuse(
                    "Signed calls need webhook-id, webhook-timestamp and webhook-signature."
                )
            workspace_ref = request.headers.get("X-Workspace") or request.GET.get("workspace", "")
            key = key_for_signature(
                workspace_ref=workspace_ref.strip(), body=request._request.body, headers=headers
            )
        else:
            raise exceptions.NotAuthenticated(
                "Send 'Authorization: Bearer whsec_…' with a workspace bridge key, "
                "or sign the call the Standard Webhooks way."
            )
        _mark_used(key)
        return (AnonymousUser(), key)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="bridge"'


class BridgeKeyScheme(OpenApiAuthenticationExtension):
    target_class = BridgeKeyAuthentication
    name = "bridgeKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "Workspace bridge key (whsec_…), or Standard Webhooks signature "
            "headers with X-Workspace.",
        }
