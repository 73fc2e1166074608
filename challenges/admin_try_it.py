"""The admin's "Try it" endpoint: an async view, so the model call holds no server thread.

The form posts with fetch (static/js/challenge_try_it.js) and shows the JSON answer. The
database is read before the call and not touched during it (SPEC §4c).
"""

import uuid
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connections
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_POST

from challenges.models import Challenge
from challenges.selectors.challenges import challenge_by_id
from challenges.services.try_it import (
    AgentTryPlan,
    TryItPlan,
    try_it_agent_prepare,
    try_it_agent_run,
    try_it_guess,
    try_it_prepare,
    try_it_run,
)
from core.errors import ApplicationError
from players.scoping import role_in


def _error(message: str, *, code: str, status: int, fields: dict | None = None) -> JsonResponse:
    body = {"error": {"code": code, "message": message, "fields": fields or {}}}
    return JsonResponse(body, status=status)


def _challenge_for(request: HttpRequest, object_id: str) -> Challenge | JsonResponse:
    user = request.user
    if not (user.is_active and user.is_staff):
        return _error("Log in to the admin first.", code="not_authenticated", status=403)
    try:
        challenge = challenge_by_id(challenge_id=uuid.UUID(str(object_id)))
    except ValueError:
        challenge = None
    # Another workspace's challenge is as unknown as a missing one.
    if challenge is None or role_in(request, challenge.workspace_id) is None:
        return _error("No such challenge.", code="not_found", status=404)
    return challenge


def _plan_for(request: HttpRequest, object_id: str, prompt: str) -> TryItPlan | JsonResponse:
    challenge = _challenge_for(request, object_id)
    try:
        if isinstance(challenge, JsonResponse):
            return challenge
        return try_it_prepare(challenge=challenge, prompt=prompt)
    except ApplicationError as exc:
        return _error(exc.message, code=exc.code, status=400, fields=exc.fields)
    finally:
        _release_connections()


def _agent_plan_for(request: HttpRequest, object_id: str) -> AgentTryPlan | JsonResponse:
    """An agent scenario's try: the slot texts come as `slot:<name>` fields."""
    challenge = _challenge_for(request, object_id)
    try:
        if isinstance(challenge, JsonResponse):
            return challenge
        if challenge.mode != Challenge.Mode.AGENT:
            raise ApplicationError("This challenge is not an agent scenario; send it a prompt.")
        slots = {
            key.removeprefix("slot:"): value
            for key, value in request.POST.items()
            if key.startswith("slot:")
        }
        return try_it_agent_prepare(challenge=challenge, slots=slots)
    except ApplicationError as exc:
        return _error(exc.message, code=exc.code, status=400, fields=exc.fields)
    finally:
        _release_connections()


def _guess_for(request: HttpRequest, object_id: str, answer: str) -> JsonResponse:
    challenge = _challenge_for(request, object_id)
    if isinstance(challenge, JsonResponse):
        return challenge
    try:
        right = try_it_guess(challenge=challenge, answer=answer)
    except ApplicationError as exc:
        return _error(exc.message, code=exc.code, status=400, fields=exc.fields)
    return JsonResponse({"guess_right": right, "recorded": False})


def _release_connections() -> None:
    """Give this thread's connections back (to the pool, if any) before the model call,
    which may take seconds. Inside a transaction (a test's) they must stay open."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


@never_cache
@csrf_protect
@require_POST
async def challenge_try_it(request: HttpRequest, object_id: str) -> JsonResponse:
    if "answer" in request.POST:  # guess mode's answer box: no model is called
        return await sync_to_async(_guess_for)(request, object_id, request.POST["answer"])
    if request.POST.get("run") == "agent":  # an agent scenario: slots in, trace out
        agent_plan = await sync_to_async(_agent_plan_for)(request, object_id)
        if isinstance(agent_plan, JsonResponse):
            return agent_plan
        return JsonResponse(await try_it_agent_run(plan=agent_plan))
    prompt = request.POST.get("prompt", "")
    plan = await sync_to_async(_plan_for)(request, object_id, prompt)
    if isinstance(plan, JsonResponse):
        return plan
    result = await try_it_run(plan=plan, prompt=prompt)
    body: dict[str, Any] = {
        # The creator may see the secret: the reply is shown as the model gave it.
        "reply": result.reply,
        "defence_fired": result.defence_fired,
        "passed": result.passed,
        "rating": result.rating,
        "feedback": result.feedback,
        "tokens_total": result.tokens_total,
        "elapsed_ms": result.elapsed_ms,
        "error": result.error,
        "recorded": False,
    }
    return JsonResponse(body)
