"""The JSON sign-up and log-in flows, built on django-allauth's public API only.

allauth's forms do the checking (password rules, unique emails, failed-login and code-request
limits, code comparison), its adapter sends the mails and generates codes, and
`allauth.account.utils` logs in and completes a sign-up, so the rules are the pages' rules.
allauth logs a user into `request.session`; API clients hold a bearer token instead, so each
log-in runs against a throwaway server-side session: the caller's cookies are left alone and
nothing stays logged in once the token is issued. A pending login code is kept in the cache
under the address it was sent to.
"""

import hashlib
import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from typing import Any

from allauth.account import app_settings as allauth_settings
from allauth.account.adapter import get_adapter
from allauth.account.forms import ConfirmLoginCodeForm, LoginForm, RequestLoginCodeForm, SignupForm
from allauth.account.models import EmailAddress, EmailConfirmationHMAC
from allauth.account.utils import (
    complete_signup,
    filter_users_by_email,
    perform_login,
    user_email,
)
from allauth.core import ratelimit as allauth_ratelimit
from allauth.utils import build_absolute_uri
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from django.urls import reverse

from core.errors import ApplicationError, fields_invalid
from core.ratelimit import client_ip, parse_rate, rate_limit_hit

logger = logging.getLogger(__name__)

_ABSENT = object()
_MANDATORY = allauth_settings.EmailVerificationMethod.MANDATORY

WRONG_CREDENTIALS = "Wrong email or password."
_MAIL_DOWN = "We could not send the mail just now; try again in a few minutes."
WRONG_CODE = "The code is wrong, or it has expired or been used up; ask for a new one."


class _DiscardedMessages:
    """allauth flashes 'You have signed in' messages meant for pages; an API call drops them."""

    def add(self, level: int, message: str, extra_tags: str = "") -> None:
        return None


@contextmanager
def _flow_session(request: HttpRequest) -> Iterator[Any]:
    engine = import_module(settings.SESSION_ENGINE)
    store = engine.SessionStore()
    saved = {name: getattr(request, name, _ABSENT) for name in ("session", "user", "_messages")}
    request.session = store
    request.user = AnonymousUser()
    request._messages = _DiscardedMessages()
    try:
        yield store
    finally:
        store.flush()
        for name, value in saved.items():
            if value is _ABSENT:
                if hasattr(request, name):
                    delattr(request, name)
            else:
                setattr(request, name, value)


def _logged_in_user(request: HttpRequest) -> AbstractBaseUser | None:
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None


def _verification_required() -> ApplicationError:
    return ApplicationError(
        "Confirm your email address with the link we have sent you, then log in.",
        code="email_verification_required",
        status=403,
    )


def _form_fields(
    form, renames: dict[str, str] | None = None, *, hidden_codes: frozenset[str] = frozenset()
) -> dict[str, list[str]]:
    renames = renames or {}
    fields: dict[str, list[str]] = {}
    for name, errors in form.errors.as_data().items():
        key = renames.get(name, name)
        if key == "__all__":
            key = "non_field_errors"
        for error in errors:
            if error.code in hidden_codes:
                continue
            fields.setdefault(key, []).extend(error.messages)
    return fields


def _has_error_code(form, code: str) -> bool:
    return any(error.code == code for errors in form.errors.as_data().values() for error in errors)


_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _window_seconds(action: str) -> int:
    """The longest window of allauth's limits for `action` (ACCOUNT_RATE_LIMITS).

    allauth refuses a throttled request without saying when to retry; its longest window
    is when every one of its counters has started over, so Retry-After is never too early.
    Rates read "amount/duration[/per]", a duration being "m", "5m", "300s" …
    """
    configured = allauth_settings.RATE_LIMITS.get(action) or ""
    longest = 0
    for rate in configured.split(","):
        parts = rate.strip().split("/")
        if len(parts) < 2 or not parts[1]:
            continue
        duration = parts[1]
        count = duration.rstrip("smhd")
        unit = duration[len(count) :] or "s"
        if unit in _UNIT_SECONDS and (count == "" or count.isdigit()):
            longest = max(longest, int(count or 1) * _UNIT_SECONDS[unit])
    return longest or 60


@contextmanager
def _mail_may_fail(message: str) -> Iterator[None]:
    # SMTP errors are OSErrors; a mail server that is down is the outside world failing.
    try:
        yield
    except OSError:
        logger.exception("Could not send an account mail")
        raise ApplicationError(message, code="mail_unavailable", status=503) from None


def _rate_limited(seconds: int) -> ApplicationError:
    seconds = max(math.ceil(seconds), 1)
    return ApplicationError(
        f"Too many attempts; try again in {seconds} seconds.",
        code="rate_limited",
        status=429,
        headers={"Retry-After": str(seconds)},
    )


def _consume(request: HttpRequest, *, action: str) -> None:
    if not allauth_ratelimit.consume(request, action=action):
        raise _rate_limited(_window_seconds(action))


def _hides_taken_addresses() -> bool:
    # Under optional verification sign-up answers with a token (SPEC §5), and a token cannot
    # be handed out for a taken address, so only mandatory verification can hide it.
    return bool(allauth_settings.PREVENT_ENUMERATION) and (
        allauth_settings.EMAIL_VERIFICATION == _MANDATORY
    )


def account_register(
    *, request: HttpRequest, email: str, name: str, password: str
) -> AbstractBaseUser | None:
    """Sign up with allauth's sign-up form (validators, unique email, confirmation mail).

    Returns the new account when it may be logged in at once, or None when the answer must
    not tell a new address from a taken one (ACCOUNT_PREVENT_ENUMERATION): the caller then
    says a mail was sent. Under mandatory verification both cases raise the same 403.
    """
    _consume(request, action="signup")
    if not get_adapter().is_open_for_signup(request):
        raise ApplicationError("Sign-up is closed.", code="signup_closed", status=403)
    hiding = _hides_taken_addresses()
    with _flow_session(request):
        form = SignupForm(
            data={"email": email, "name": name, "password1": password, "password2": password}
        )
        if not form.is_valid():
            fields = _form_fields(
                form,
                {"password1": "password", "password2": "password"},
                hidden_codes=frozenset({"email_taken"}) if hiding else frozenset(),
            )
            if fields:
                raise fields_invalid(fields)
            # Only the taken address stood in the way: tell its owner, answer as for a new
            # one, and spend the time a new account's password hash would take.
            make_password(password)
            with _mail_may_fail(_MAIL_DOWN):
                get_adapter().send_account_already_exists_mail(email.strip().lower())
            return _signup_without_login()
        with transaction.atomic(), _mail_may_fail(_MAIL_DOWN):
            user, _ = form.try_save(request)
        if user is None:
            # Mandatory verification: allauth itself has mailed the owner of the address.
            return _signup_without_login()
        with _mail_may_fail(
            "Your account is created, but the confirmation mail could not be sent just now. "
            "Log in, then ask for a new confirmation link on /accounts/email/."
        ):
            complete_signup(
                request,
                user,
                email_verification=allauth_settings.EMAIL_VERIFICATION,
                success_url=None,
            )
        logged_in = _logged_in_user(request)
    if logged_in is None or hiding:
        return _signup_without_login()
    return logged_in


def _signup_without_login() -> None:
    if allauth_settings.EMAIL_VERIFICATION == _MANDATORY:
        raise _verification_required()
    return None


def account_login(*, request: HttpRequest, email: str, password: str) -> AbstractBaseUser:
    """Log in with allauth's login form, so its failed-login limits and checks apply."""
    _consume(request, action="login")
    with _flow_session(request):
        form = LoginForm(data={"login": email, "password": password}, request=request)
        if not form.is_valid():
            if _has_error_code(form, "too_many_login_attempts"):
                raise _rate_limited(_window_seconds("login_failed"))
            if "login" in form.errors or "password" in form.errors:
                raise ApplicationError(
                    "Some fields are invalid: login, password.",
                    fields=_form_fields(form, {"login": "email"}),
                )
            raise ApplicationError(WRONG_CREDENTIALS, code="invalid_credentials", status=401)
        with _mail_may_fail(_MAIL_DOWN):
            form.login(request)
        logged_in = _logged_in_user(request)
    if logged_in is None:
        raise _verification_required()
    return logged_in


def creator_authenticate(*, request: HttpRequest, email: str, password: str) -> AbstractBaseUser:
    """Check a creator's console credentials under the web login's failed-login limits.

    allauth's adapter counts failures per address and per account (`login_failed`), so a
    password guessed from many addresses is refused once the account's allowance is spent.
    """
    try:
        user = get_adapter(request).authenticate(request, email=email, password=password)
    except ValidationError as error:
        if error.code == "too_many_login_attempts":
            raise _rate_limited(_window_seconds("login_failed")) from None
        raise
    if user is None or not user.is_active or not user.is_staff:
        raise ApplicationError(
            "Wrong email or password, or the account is not a creator.",
            code="invalid_credentials",
            status=401,
        )
    return user


def _pending_code_key(email: str) -> str:
    return "login-code:" + hashlib.sha256(email.lower().encode()).hexdigest()


def login_code_send(*, request: HttpRequest, email: str) -> int:
    """Email a login code (or, for an unknown address, allauth's 'no account' mail).

    Returns how many seconds the code stays valid. The answer is the same whether or not
    an account exists. A new code replaces the address's previous one.
    """
    email = email.strip().lower()
    form = RequestLoginCodeForm(data={"email": email})
    if not form.is_valid():
        if _has_error_code(form, "too_many_login_attempts"):
            raise _rate_limited(_window_seconds("request_login_code"))
        raise ApplicationError("Some fields are invalid: email.", fields=_form_fields(form))
    email = form.cleaned_data["email"].lower()
    users = filter_users_by_email(email, is_active=True, prefer_verified=True)
    adapter = get_adapter()
    timeout = allauth_settings.LOGIN_BY_CODE_TIMEOUT
    key = _pending_code_key(email)
    if not users:
        cache.delete_many([key, key + ":tries"])
        if allauth_settings.EMAIL_UNKNOWN_ACCOUNTS:
            signup_url = build_absolute_uri(request, reverse("account_signup"))
            context = {"request": request, "signup_url": signup_url}
            if adapter.is_open_for_signup(request):
                # The same mail carries a sign-up code: POST /web/api/register with it.
                context["signup_code"] = _signup_code_issue(email=email)
            with _mail_may_fail(_MAIL_DOWN):
                adapter.send_mail("account/email/unknown_account", email, context)
        return timeout
    code = adapter.generate_login_code()
    with _mail_may_fail(_MAIL_DOWN):
        adapter.send_mail("account/email/login_code", email, {"request": request, "code": code})
    cache.set_many(
        {key: {"user_id": users[0].pk, "code": code, "sent_at": time.time()}, key + ":tries": 0},
        timeout=timeout,
    )
    return timeout


def login_code_verify(*, request: HttpRequest, email: str, code: str) -> AbstractBaseUser:
    """Check an emailed code; after ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS wrong tries it is gone."""
    limit, window = parse_rate(settings.LOGIN_RATE_LIMIT)
    rate_limit_hit(
        scope="web-login-code-verify", key=client_ip(request), limit=limit, window_seconds=window
    )
    pending = _pending_code_take(key=_pending_code_key(email.strip().lower()), code=code)
    user = get_user_model().objects.filter(pk=pending["user_id"], is_active=True).first()
    if user is None:
        raise ApplicationError(WRONG_CODE, code="invalid_code", status=400)
    return _login_by_code(request=request, user=user, email=email.strip().lower())


def _pending_code_take(*, key: str, code: str) -> dict:
    """The pending entry under `key` if `code` matches it, used up; else the one 400.

    After ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS wrong tries the entry is gone.
    """
    pending = cache.get(key)
    if not pending or time.time() - pending["sent_at"] >= allauth_settings.LOGIN_BY_CODE_TIMEOUT:
        raise ApplicationError(WRONG_CODE, code="invalid_code", status=400)
    # The count is one atomic increment, so parallel guesses cannot share a try.
    try:
        tries = cache.incr(key + ":tries")
    except ValueError:
        tries = allauth_settings.LOGIN_BY_CODE_MAX_ATTEMPTS + 1
    form = ConfirmLoginCodeForm(data={"code": code}, code=pending["code"])
    if tries > allauth_settings.LOGIN_BY_CODE_MAX_ATTEMPTS or not form.is_valid():
        if tries >= allauth_settings.LOGIN_BY_CODE_MAX_ATTEMPTS:
            cache.delete_many([key, key + ":tries"])
        raise ApplicationError(WRONG_CODE, code="invalid_code", status=400)
    # Whoever deletes the entry uses the code; a second request with it finds nothing.
    if not cache.delete(key):
        raise ApplicationError(WRONG_CODE, code="invalid_code", status=400)
    return pending


def _signup_code_key(email: str) -> str:
    return "signup-code:" + hashlib.sha256(email.lower().encode()).hexdigest()


def _signup_code_issue(*, email: str) -> str:
    code = get_adapter().generate_login_code()
    key = _signup_code_key(email)
    cache.set_many(
        {key: {"code": code, "sent_at": time.time()}, key + ":tries": 0},
        timeout=allauth_settings.LOGIN_BY_CODE_TIMEOUT,
    )
    return code


def account_register_by_code(
    *, request: HttpRequest, email: str, name: str, code: str
) -> AbstractBaseUser:
    """Sign up without a password: `code` is the one `login_code_send` mailed to an address
    with no account. The code proves the address, so the account starts verified and is
    logged in at once; its interface language comes from the request (Accept-Language)."""
    from players.languages import interface_language_from_request
    from players.services import profile_create

    limit, window = parse_rate(settings.LOGIN_RATE_LIMIT)
    rate_limit_hit(
        scope="web-login-code-verify", key=client_ip(request), limit=limit, window_seconds=window
    )
    _consume(request, action="signup")
    adapter = get_adapter()
    if not adapter.is_open_for_signup(request):
        raise ApplicationError("Sign-up is closed.", code="signup_closed", status=403)
    email = email.strip().lower()
    errors = _display_name_errors(name)
    if errors:
        raise ApplicationError("Some fields are invalid: name.", fields={"name": errors})
    _pending_code_take(key=_signup_code_key(email), code=code)
    with transaction.atomic():
        if filter_users_by_email(email):
            # Taken since the code was sent: the code is used up and proves nothing more.
            raise ApplicationError(WRONG_CODE, code="invalid_code", status=400)
        user = adapter.new_user(request)
        user_email(user, email)
        adapter.populate_username(request, user)
        user.set_unusable_password()
        user.save()
        EmailAddress.objects.create(user=user, email=email, verified=True, primary=True)
        profile_create(
            account=user,
            display_name=name,
            interface_language=interface_language_from_request(request),
        )
    return _login_by_code(request=request, user=user, email=email)


def _display_name_errors(name: str) -> list[str]:
    from players.validators import validate_display_name

    if not name or not name.strip():
        return ["This field is required."]
    try:
        validate_display_name(name)
    except ValidationError as error:
        return list(error.messages)
    return []


def _login_by_code(*, request: HttpRequest, user: AbstractBaseUser, email: str) -> AbstractBaseUser:
    with _flow_session(request):
        # The code reached the address, which proves it as the confirmation link would.
        address = EmailAddress.objects.filter(user=user, email__iexact=email).first()
        if address is not None and not address.verified:
            EmailConfirmationHMAC.create(address).confirm(request)
        perform_login(
            request, user, email_verification=allauth_settings.EMAIL_VERIFICATION, email=email
        )
        logged_in = _logged_in_user(request)
    if logged_in is None:
        raise _verification_required()
    return logged_in
