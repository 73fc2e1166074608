import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import ApplicationError, NotFoundError, fields_invalid
from core.slugs import unique_slug
from players.models import (
    ACCOUNT_EXTERNAL_ID_PREFIX,
    ApiToken,
    EndUser,
    Membership,
    PlayerProfile,
    Workspace,
    account_external_id,
    is_account_external_id,
)
from players.signals import end_users_renamed
from players.validators import validate_display_name

TOKEN_PREFIX = "phc_"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def token_issue(*, user: AbstractBaseUser, name: str = "") -> str:
    """Create an API token and return its only plain copy; the user's expired ones go."""
    return token_create(user=user, name=name)[1]


def token_create(
    *, user: AbstractBaseUser, name: str = "", agent: bool = False
) -> tuple[ApiToken, str]:
    """A new API token and its only plain copy; the user's expired ones go. An `agent`
    token marks what it plays as an agent's (SPEC §9 Agents)."""
    now = timezone.now()
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
        token = ApiToken.objects.create(
            user=user,
            key_hash=hash_token(raw),
            prefix=raw[:10],
            name=name,
            agent=agent,
            expires_at=now + timedelta(days=settings.API_TOKEN_TTL_DAYS),
        )
    return token, raw


def token_authenticate(*, raw: str) -> ApiToken | None:
    """The live token `raw` is the plain copy of, with its user; None when unknown,
    expired or revoked, or when its user is inactive."""
    token = ApiToken.objects.select_related("user").filter(key_hash=hash_token(raw)).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.expires_at <= now:
        return None
    # One write a minute at most, so a busy token does not write on every request.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def token_revoke(*, user: AbstractBaseUser, token_id: int) -> None:
    """Revoke one of the user's tokens; another user's token reads as unknown (404)."""
    deleted, _ = ApiToken.objects.filter(user=user, pk=token_id).delete()
    if not deleted:
        raise NotFoundError("No such token of yours.")


def tokens_revoke_all(*, user: AbstractBaseUser) -> int:
    """Revoke every token of the user (their password changed); returns how many."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return deleted


def workspace_get_or_create(*, name: str) -> Workspace:
    name = name.strip()
    if not name:
        raise ApplicationError("A workspace needs a name.", fields={"workspace": ["Required."]})
    workspace = Workspace.objects.filter(name=name).first()
    if workspace:
        return workspace
    slug = unique_slug(model=Workspace, text=name, fallback="workspace", max_length=90)
    try:
        with transaction.atomic():
            return Workspace.objects.create(name=name, slug=slug)
    except IntegrityError:
        return Workspace.objects.get(name=name)


def membership_set(
    *, workspace: Workspace, user: AbstractBaseUser, role: str = Membership.Role.OWNER
) -> Membership:
    membership, _ = Membership.objects.update_or_create(
        workspace=workspace, user=user, defaults={"role": role}
    )
    return membership


@transaction.atomic
def creator_create(*, email: str, password: str, workspace_name: str) -> AbstractBaseUser:
    """A staff user who owns `workspace_name` (created when missing)."""
    User = get_user_model()
    email = User.objects.normalize_email(email).lower()
    user = User.objects.filter(email__iexact=email).first()
    if user is None:
        user = User.objects.create_user(username=email[:150], email=email, password=password)
    else:
        user.set_password(password)
    user.is_staff = True
    user.save()
    _email_mark_verified(user)
    workspace = workspace_get_or_create(name=workspace_name)
    membership_set(workspace=workspace, user=user, role=Membership.Role.OWNER)
    return user


def _email_mark_verified(user: AbstractBaseUser) -> None:
    from allauth.account.models import EmailAddress

    EmailAddress.objects.update_or_create(
        user=user, email=user.email, defaults={"verified": True, "primary": True}
    )


def end_user_for_account(*, workspace: Workspace, account: AbstractBaseUser) -> EndUser:
    end_user = EndUser.objects.filter(workspace=workspace, account=account).first()
    if end_user:
        return end_user
    profile = PlayerProfile.objects.filter(account=account).first()
    try:
        with transaction.atomic():
            return EndUser.objects.create(
                workspace=workspace,
                external_id=account_external_id(account.pk),
                account=account,
                display_name=profile.display_name if profile else "",
            )
    except IntegrityError:
        return EndUser.objects.get(workspace=workspace, account=account)


def end_user_for_external_id(*, workspace: Workspace, external_id: str) -> EndUser:
    external_id = external_id.strip()[:255]
    if not external_id:
        raise ApplicationError("'user' must not be empty.", fields={"user": ["Required."]})
    if is_account_external_id(external_id):
        # That id names a site account's player; a Dify user must not play as one.
        raise ApplicationError(
            f"'user' must not start with '{ACCOUNT_EXTERNAL_ID_PREFIX}'.",
            fields={"user": [f"Reserved prefix '{ACCOUNT_EXTERNAL_ID_PREFIX}'."]},
        )
    end_user, _ = EndUser.objects.get_or_create(workspace=workspace, external_id=external_id)
    return end_user


_DISPLAY_NAME_MAX = PlayerProfile._meta.get_field("display_name").max_length
_AVATAR_URL_MAX = PlayerProfile._meta.get_field("avatar_url").max_length
_https_url = URLValidator(schemes=["https"])


def _clean_display_name(value: str, errors: dict[str, list[str]]) -> str:
    value = " ".join(value.split())
    if not value:
        errors["display_name"] = ["Enter a display name."]
    elif len(value) > _DISPLAY_NAME_MAX:
        errors["display_name"] = [f"Use at most {_DISPLAY_NAME_MAX} characters."]
    else:
        try:
            validate_display_name(value)
        except ValidationError as error:
            errors["display_name"] = error.messages
    return value


def _clean_avatar_url(value: str, errors: dict[str, list[str]]) -> str:
    value = value.strip()
    if not value:
        return ""
    if len(value) > _AVATAR_URL_MAX:
        errors["avatar_url"] = [f"Use at most {_AVATAR_URL_MAX} characters."]
        return value
    try:
        _https_url(value)
    except ValidationError:
        errors["avatar_url"] = ["Enter a full https:// URL."]
    return value


def _raise_if_invalid(errors: dict[str, list[str]]) -> None:
    if errors:
        raise fields_invalid(errors)


def _clean_interface_language(value: str, errors: dict[str, list[str]]) -> str:
    offered = [code for code, _ in settings.LANGUAGES]
    if value and value not in offered:
        errors.setdefault("interface_language", []).append(
            "Choose one of the languages the site offers: " + ", ".join(offered) + "."
        )
    return value


def profile_create(
    *, account: AbstractBaseUser, display_name: str, interface_language: str = ""
) -> PlayerProfile:
    errors: dict[str, list[str]] = {}
    display_name = _clean_display_name(display_name, errors)
    interface_language = _clean_interface_language(interface_language, errors)
    _raise_if_invalid(errors)
    defaults = {"display_name": display_name}
    if interface_language:
        defaults["interface_language"] = interface_language
    profile, _ = PlayerProfile.objects.update_or_create(account=account, defaults=defaults)
    return profile


@transaction.atomic
def profile_update(
    *,
    account: AbstractBaseUser,
    display_name: str | None = None,
    avatar_url: str | None = None,
    notify_on_first_blood: bool | None = None,
    notify_on_record_beaten: bool | None = None,
    notify_on_waves: bool | None = None,
    interface_language: str | None = None,
    share_attempts: bool | None = None,
) -> PlayerProfile:
    """Change what was given; a new display name also renames the player on every leaderboard."""
    errors: dict[str, list[str]] = {}
    if display_name is not None:
        display_name = _clean_display_name(display_name, errors)
    if interface_language is not None:
        interface_language = _clean_interface_language(interface_language, errors)
    if avatar_url is not None:
        avatar_url = _clean_avatar_url(avatar_url, errors)
    _raise_if_invalid(errors)

    profile, _ = PlayerProfile.objects.select_for_update().get_or_create(account=account)
    changes = {
        "display_name": display_name,
        "avatar_url": avatar_url,
        "notify_on_first_blood": notify_on_first_blood,
        "notify_on_record_beaten": notify_on_record_beaten,
        "notify_on_waves": notify_on_waves,
        "interface_language": interface_language,
        "share_attempts": share_attempts,
    }
    for field, value in changes.items():
        if value is not None:
            setattr(profile, field, value)
    profile.save()
    if display_name is not None:
        EndUser.objects.filter(account=account).update(display_name=display_name)
        end_users_renamed.send(
            sender=EndUser,
            end_user_ids=EndUser.objects.filter(account=account).values_list("id", flat=True),
        )
    return profile
