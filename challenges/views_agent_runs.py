"""Agent pages (SPEC §9): the play panel's plain post, which runs the agent and shows the
trace on the challenge page (the panel works the same without JavaScript)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from challenges.models import ChallengeAttempt
from challenges.modes import play_mode_for
from challenges.selectors.challenges import challenge_visible_by_slug
from core.errors import ApplicationError
from core.ratelimit import client_ip
from core.threads import run_orm

SLOT_FIELD_PREFIX = "slot_"


def _visible(slug: str):
    challenge = challenge_visible_by_slug(slug=slug)
    if challenge is None:
        raise Http404("No such challenge.")
    return challenge


@require_POST
@login_required
async def agent_run_new(request, slug: str):
    # Async, so the wait on the model holds neither a thread nor a database connection.
    challenge = await run_orm(_visible, slug)
    slots = {
        name.removeprefix(SLOT_FIELD_PREFIX): text
        for name, text in request.POST.items()
        if name.startswith(SLOT_FIELD_PREFIX)
    }
    try:
        await play_mode_for(challenge).run_async(
            challenge=challenge,
            account=await request.auser(),
            slots=slots,
            ip=client_ip(request),
            source=ChallengeAttempt.Source.WEB,
            codename=request.POST.get("codename", ""),
        )
    except ApplicationError as exc:
        await run_orm(messages.error, request, exc.message)
    return redirect(reverse("challenge-page", args=[slug]) + "#agent-trace")
