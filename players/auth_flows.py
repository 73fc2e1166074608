"""The JSON sign-up and log-in flows, driven through django-allauth's own forms and flows.

allauth keeps the state of a flow (the pending login, the emailed code, how many tries are
left) in `request.session` and logs the user into it. API clients hold a bearer token, not a
session cookie, so every flow here runs against a server-side session of its own: the
caller's cookies are left alone and nothing stays logged in once the token is issued.
A pending login code is found again by the email address it was sent to.
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
from allauth.account.internal.constants import LoginStageKey
from allauth.account.internal.flows.login_by_code import LoginCodeVerificationProcess
from allauth.account.internal.flows.signup import complete_signup
from allauth.account.stages import LoginStageController
from allauth.core import ratelimit as allauth_ratelimit
from allauth.core.internal import ratelimit as allauth_ratelimit_internals
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest

from core.errors import ApplicationError
from core.ratelimit import client_ip, parse_rate, rate_limit_hit

logger = logging.getLogger(__name__)

_ALLAUTH_APP = "allauth.account"
_VERIFY_LOCK_SECONDS = 10
_ABSENT = object()

WRONG_CREDENTIALS = "Wrong email or password."
_MAIL_DOWN = "We could not send the mail just now; try again in a few minutes."
WRONG_CODE = "The code is wrong, or it has expired or been used up; ask for a new one."


class _DiscardedMessages:
    """allauth flashes 'You have signed in' messages meant for pages; an API call drops them."""

    def add(self, level: int, message: str, extra_tags: str = "") -> None:
        return None


@contextmanager
def _flow_session(request: HttpRequest, *, session_key: str | None = None) -> Iterator[Any]:
    engine = import_module(settings.SESSION_ENGINE)
    store = engine.SessionStore(session_key)
    saved = {name: getattr(request, name, _ABSENT) for name in ("session", "user", "_messages")}
    request.session = store
    request.user = AnonymousUser()
    request._messages = _DiscardedMessages()
    try:
        yield store
    finally:
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


def _form_fields(form, renames: dict[str, str] | None = None) -> dict[str, list[str]]:
    renames = renames or {}
    fields: dict[str, list[str]] = {}
    for name, errors in form.errors.items():
        key = renames.get(name, name)
        if key == "__all__":
            key = "non_field_errors"
        fields.setdefault(key, []).extend(str(error) for error in errors)
    return fields


def _has_error_code(form, code: str) -> bool:
    return any(error.code == code for errors in form.errors.as_data().values() for error in errors)


def _retry_after(request: HttpRequest, *, action: str, key: str | None = None) -> int:
    """Seconds until allauth's limit for `action` lets a request through again.

    allauth answers a throttled request without saying when to retry, so this reads the
    hit history it keeps in the cache.
    """
    now = time.time()
    wait = 0.0
    rates = allauth_ratelimit_internals.get_rates(app=_ALLAUTH_APP, action=action)
    for rate in rates:
        if rate.per == "user" or (rate.per == "key" and key is None):
            continue
        cache_key = allauth_ratelimit_internals.get_cache_key(
            request, app=_ALLAUTH_APP, action=action, rate=rate, key=key
        )
        history = cache.get(cache_key) or []
        if len(history) >= rate.amount:
            wait = max(wait, history[rate.amount - 1] + rate.duration - now)
    if wait <= 0:
        wait = max((rate.duration for rate in rates), default=60)
    return max(math.ceil(wait), 1)


@contextmanager
def _mail_may_fail(message: str) -> Iterator[None]:
    # SMTP errors are OSErrors; a mail server that is down is the outside world failing.
    try:
        yield
    except OSError:
        logger.exception("Could not send an account mail")
        raise ApplicationError(message, code="mail_unavailable", status=503) from None


def _rate_limited(seconds: int) -> ApplicationError:
    return ApplicationError(
        f"Too many attempts; try again in {seconds} seconds.",
        code="rate_limited",
        status=429,
        headers={"Retry-After": str(seconds)},
    )


def _consume(request: HttpRequest, *, action: str, key: str | None = None) -> None:
    if not allauth_ratelimit.consume(request, action=action, key=key):
        raise _rate_limited(_retry_after(request, action=action, key=key))


def account_register(
    *, request: HttpRequest, email: str, name: str, password: str
) -> AbstractBaseUser:
    """Sign up with allauth's sign-up form (validators, unique email, confirmation mail)."""
    _consume(request, action="signup")
    if not get_adapter().is_open_for_signup(request):
        raise ApplicationError("Sign-up is closed.", code="signup_closed", status=403)
    with _flow_session(request) as session:
        form = SignupForm(
            data={"email": email, "name": name, "password1": password, "password2": password}
        )
        if not form.is_valid():
            fields = _form_fields(form, {"password1": "password", "password2": "password"})
            raise ApplicationError(
                "Some fields are invalid: " + ", ".join(sorted(fields)) + ".", fields=fields
            )
        with transaction.atomic(), _mail_may_fail(_MAIL_DOWN):
            user, _ = form.try_save(request)
        if user is None:
            # allauth hides that the address is taken (enumeration prevention) and has
            # mailed its owner instead.
            session.flush()
            raise _verification_required()
        with _mail_may_fail(
            "Your account is created, but the confirmation mail could not be sent just now. "
            "Log in, then ask for a new confirmation link on /accounts/email/."
        ):
            complete_signup(request, user=user)
        logged_in = _logged_in_user(request)
        session.flush()
    if logged_in is None:
        raise _verification_required()
    return logged_in


def account_login(*, request: HttpRequest, email: str, password: str) -> AbstractBaseUser:
    """Log in with allauth's login form, so its failed-login limits and checks apply."""
    _consume(request, action="login")
    with _flow_session(request) as session:
        form = LoginForm(data={"login": email, "password": password}, request=request)
        if not form.is_valid():
            session.flush()
            if _has_error_code(form, "too_many_login_attempts"):
                attempts_key = get_adapter()._get_login_attempts_cache_key(request, email=email)
                raise _rate_limited(_retry_after(request, action="login_failed", key=attempts_key))
            if "login" in form.errors or "password" in form.errors:
                raise ApplicationError(
                    "Some fields are invalid: login, password.",
                    fields=_form_fields(form, {"login": "email"}),
                )
            raise ApplicationError(WRONG_CREDENTIALS, code="invalid_credentials", status=401)
        with _mail_may_fail(_MAIL_DOWN):
            form.login(request)
        logged_in = _logged_in_user(request)
        session.flush()
    if logged_in is None:
        raise _verification_required()
    return logged_in


def _pending_code_key(email: str) -> str:
    return "login-code-session:" + hashlib.sha256(email.lower().encode()).hexdigest()


def login_code_send(*, request: HttpRequest, email: str) -> int:
    """Email a login code (or, for an unknown address, allauth's 'no account' mail).

    Returns how many seconds the code stays valid. The answer is the same whether or not
    an account exists.
    """
    email = email.strip().lower()
    with _flow_session(request) as session:
        form = RequestLoginCodeForm(data={"email": email})
        if not form.is_valid():
            session.flush()
            if _has_error_code(form, "too_many_login_attempts"):
                raise _rate_limited(_retry_after(request, action="request_login_code", key=email))
            raise ApplicationError("Some fields are invalid: email.", fields=_form_fields(form))
        with _mail_may_fail(_MAIL_DOWN):
            LoginCodeVerificationProcess.initiate(
                request=request, user=form._user, email=form.cleaned_data["email"]
            )
        timeout = allauth_settings.LOGIN_BY_CODE_TIMEOUT
        session.set_expiry(timeout)
        session.save()
        previous = cache.get(_pending_code_key(email))
        cache.set(_pending_code_key(email), session.session_key, timeout=timeout)
    if previous and previous != session.session_key:
        with _flow_session(request, session_key=previous) as stale:
            stale.delete()
    return timeout


def login_code_verify(*, request: HttpRequest, email: str, code: str) -> AbstractBaseUser:
    """Check an emailed code with allauth's code process; it counts and limits the tries."""
    limit, window = parse_rate(settings.LOGIN_RATE_LIMIT)
    rate_limit_hit(
        scope="web-login-code-verify", key=client_ip(request), limit=limit, window_seconds=window
    )
    email = email.strip().lower()
    pending_key = _pending_code_key(email)
    # One check at a time per address: allauth counts wrong tries in the session it loads,
    # so parallel guesses would each see the same count, and one code could log in twice.
    lock_key = pending_key + ":lock"
    if not cache.add(lock_key, 1, timeout=_VERIFY_LOCK_SECONDS):
        raise _rate_limited(1)
    try:
        return _login_code_check(request=request, pending_key=pending_key, code=code)
    finally:
        cache.delete(lock_key)


def _login_code_check(*, request: HttpRequest, pending_key: str, code: str) -> AbstractBaseUser:
    session_key = cache.get(pending_key)
    if not session_key:
        raise ApplicationError(WRONG_CODE, code="invalid_code", status=400)
    with _flow_session(request, session_key=session_key) as session:
        stage = LoginStageController.enter(request, LoginStageKey.LOGIN_BY_CODE)
        process = LoginCodeVerificationProcess.resume(stage) if stage else None
        if process is None:
            session.delete()
            cache.delete(pending_key)
            raise ApplicationError(WRONG_CODE, code="invalid_code", status=400)
        form = ConfirmLoginCodeForm(data={"code": code}, code=process.code)
        if not form.is_valid():
            if process.record_invalid_attempt():
                session.save()
            else:
                session.delete()
                cache.delete(pending_key)
            raise ApplicationError(WRONG_CODE, code="invalid_code", status=400)
        cache.delete(pending_key)
        process.finish(None)
        logged_in = _logged_in_user(request)
        session.delete()
    if logged_in is None:
        raise _verification_required()
    return logged_in
