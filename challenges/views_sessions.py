"""Conversation pages (SPEC §9): the play box's plain posts and a session's transcript.

The page's chat streams turns through the web API (static/js/conversation.js); these
posts are what the same forms do without JavaScript.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from challenges.modes import play_mode_for
from challenges.modes.conversation import turn_play_async
from challenges.selectors.challenges import challenge_visible_by_slug
from challenges.selectors.sessions import session_turns, session_turns_left, session_visible_to
from core.errors import ApplicationError
from core.ratelimit import client_ip
from core.threads import run_orm


def _challenge_page(slug: str) -> str:
    return reverse("challenge-page", args=[slug]) + "#play"


def _visible(slug: str):
    challenge = challenge_visible_by_slug(slug=slug)
    if challenge is None:
        raise Http404("No such challenge.")
    return challenge


@require_POST
@login_required
async def session_new(request, slug: str):
    """A new session; with a prompt (the chat's first message), its first turn too."""
    challenge = await run_orm(_visible, slug)
    account = await request.auser()
    try:
        session = await run_orm(
            play_mode_for(challenge).session_open,
            challenge=challenge,
            account=account,
            ip=client_ip(request),
            codename=request.POST.get("codename", ""),
        )
        prompt = request.POST.get("prompt", "")
        if prompt.strip():
            await turn_play_async(
                session_id=session.id,
                account=account,
                prompt=prompt,
                ip=client_ip(request),
                source="web",
            )
    except ApplicationError as exc:
        await run_orm(messages.error, request, exc.message)
    return redirect(_challenge_page(slug))


@require_POST
@login_required
async def session_turn(request, slug: str, session_id: str):
    # Async, so the wait on the model holds neither a thread nor a database connection.
    try:
        await turn_play_async(
            session_id=session_id,
            account=await request.auser(),
            prompt=request.POST.get("prompt", ""),
            ip=client_ip(request),
            source="web",
        )
    except ApplicationError as exc:
        await run_orm(messages.error, request, exc.message)
    return redirect(_challenge_page(slug))


@require_GET
@login_required
def session_transcript(request, session_id: str):
    """A session's turns, masked as stored: for its player and the challenge's creators."""
    session = session_visible_to(session_id=session_id, user=request.user)
    if session is None:
        raise Http404("No such transcript.")
    return render(
        request,
        "challenges/session.html",
        {
            "play_session": session,
            "challenge": session.challenge,
            "session_turns": session_turns(session=session),
            "turns_left": session_turns_left(session=session, challenge=session.challenge),
        },
    )
