"""Player pages: the challenge list and one challenge's page with its htmx play box."""

from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import get_conditional_response, patch_cache_control, set_response_etag
from django.views.decorators.http import require_GET, require_POST

from challenges.models import PROMPT_MAX_CHARS, Challenge, ChallengeAttempt, Hint, LeaderboardEntry
from challenges.modes import play_mode_for
from challenges.selectors.attempts import attempts_of_player
from challenges.selectors.bounties import challenge_bounties, challenge_waves
from challenges.selectors.challenges import challenge_visible_by_slug, challenges_public
from challenges.selectors.collections import collections_public
from challenges.selectors.hints import hint_body_shown, hint_visible_by_id, hints_for_player
from challenges.selectors.leaderboards import leaderboard_for_challenge, leaderboard_rank
from challenges.selectors.levels import (
    collection_topped_by,
    level_locked_reason,
    level_map,
    next_level,
    solved_challenge_ids_of_account,
)
from challenges.selectors.standings import board_filters, board_view
from challenges.services.budgets import budget_paused_reason
from challenges.services.hints import hint_unlock
from challenges.services.play import (
    ANSWER_MAX_CHARS,
    attempt_guess_async,
    challenge_closed_reason,
)
from challenges.services.reviews import attempt_appeal
from challenges.targets import codename_choices, codenames
from core.api import uuid_or_404, valid_uuids
from core.errors import ApplicationError
from core.markdown import render_markdown
from core.ratelimit import client_ip
from core.theme import theme_style
from core.threads import run_orm
from players.models import EndUser
from players.selectors import brackets_of_workspace, end_user_of_account

HISTORY_LIMIT = 20


def _leaderboard_context(request, challenge: Challenge, end_user: EndUser | None) -> dict:
    view = board_view(
        workspace=challenge.workspace,
        viewer=request.user,
        **board_filters(request.GET, page=True),
    )
    target_names = codenames(challenge)
    # Several targets: one model's board (an unknown codename shows the combined one).
    board_target = request.GET.get("target", "")
    board_target = board_target if board_target in target_names else ""
    return {
        "challenge": challenge,
        "board": view,
        "target_names": target_names,
        "board_target": board_target,
        "frozen_at": view.cutoff,
        "brackets": brackets_of_workspace(workspace_id=challenge.workspace_id)
        if view.shown
        else [],
        "leaderboard": leaderboard_for_challenge(
            challenge=challenge,
            limit=settings.LEADERBOARD_DEFAULT_LIMIT,
            view=view,
            codename=board_target,
        )
        if view.shown
        else [],
        "own_end_user_id": str(end_user.id) if end_user else "",
        "own_rank": leaderboard_rank(challenge=challenge, end_user=end_user) if end_user else None,
        # While frozen the player still sees that they solved it (their place waits).
        "own_solved": bool(end_user)
        and LeaderboardEntry.objects.filter(challenge=challenge, end_user=end_user).exists(),
    }


def _board_context(request, challenge: Challenge) -> dict:
    end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
    context = _leaderboard_context(request, challenge, end_user)
    context["history"] = (
        attempts_of_player(challenge=challenge, end_user=end_user, limit=HISTORY_LIMIT)
        if end_user
        else []
    )
    context["next_level"] = next_level(challenge=challenge) if context["own_solved"] else None
    context["conquered"] = (
        collection_topped_by(challenge=challenge)
        if context["own_solved"] and not context["next_level"]
        else None
    )
    return context


@require_GET
def home(request):
    solved_ids = solved_challenge_ids_of_account(account=request.user)
    levels = level_map(solved_ids=solved_ids)
    # Challenges of their own first, newest first; then the levels, in climbing order.
    challenges = sorted(
        challenges_public(), key=lambda challenge: levels.order.get(challenge.id, (-1, 0))
    )
    return render(
        request,
        "challenges/home.html",
        {
            "challenges": challenges,
            "collections": collections_public(),
            "solved_ids": solved_ids,
            "locked_ids": levels.locked_ids,
        },
    )


def _visible(slug: str) -> Challenge:
    challenge = challenge_visible_by_slug(slug=slug)
    if challenge is None:
        raise Http404("No such challenge.")
    return challenge


@dataclass(frozen=True)
class PageHint:
    hint: Hint
    number: int
    # The body's HTML, only when the player may read it (free, or unlocked): a paid body
    # never reaches the page before that.
    html: str | None


def _page_hint(hint: Hint, number: int) -> PageHint:
    shown = hint_body_shown(hint)
    return PageHint(hint=hint, number=number, html=render_markdown(hint.body_md) if shown else None)


def _page_hints(challenge: Challenge, end_user: EndUser | None) -> list[PageHint]:
    hints = hints_for_player(challenge=challenge, end_user=end_user)
    return [_page_hint(hint, number) for number, hint in enumerate(hints, start=1)]


def _page_context(request, challenge: Challenge) -> dict:
    context = _board_context(request, challenge)
    mode = play_mode_for(challenge)
    end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
    context.update(mode.page_context(challenge=challenge, end_user=end_user))
    context.update(
        {
            "play_template": mode.play_template,
            "instructions_html": render_markdown(challenge.instructions_md),
            "theme_style": theme_style(challenge.theme),
            "closed_reason": challenge_closed_reason(challenge=challenge),
            "paused_reason": budget_paused_reason(challenge=challenge, end_user=end_user),
            "locked_reason": level_locked_reason(challenge=challenge, end_user=end_user),
            "hints": _page_hints(challenge, end_user),
            # What breaking it pays and when its wave plays (SPEC §10, docs/bounties.md).
            "bounties": challenge_bounties(challenge=challenge),
            "waves": challenge_waves(challenge=challenge),
            "prompt_max": PROMPT_MAX_CHARS,
            "answer_max": ANSWER_MAX_CHARS,
            # The codename picker: shown when the player chooses their model.
            "codename_choices": codename_choices(challenge),
        }
    )
    context["hints_unlockable"] = request.user.is_authenticated and not (
        context["closed_reason"] or context["locked_reason"]
    )
    return context


@require_GET
def challenge_page(request, slug: str):
    challenge = _visible(slug)
    return render(request, "challenges/challenge.html", _page_context(request, challenge))


@require_POST
@login_required
async def challenge_play(request, slug: str):
    # Async, so the wait on the model holds neither a thread nor a database connection.
    challenge = await run_orm(_visible, slug)
    prompt = request.POST.get("prompt", "")
    outcome: dict = {"prompt": prompt}
    status, headers = 200, {}
    try:
        outcome["result"] = await play_mode_for(challenge).attempt_async(
            challenge=challenge,
            account=await request.auser(),
            prompt=prompt,
            ip=client_ip(request),
            source=ChallengeAttempt.Source.WEB,
            codename=request.POST.get("codename", ""),
        )
    except ApplicationError as exc:
        outcome["error"] = exc.message
        status, headers = exc.status, exc.headers
    return await run_orm(_play_response, request, challenge, outcome, status, headers)


@require_POST
@login_required
async def challenge_guess(request, slug: str):
    """The answer box of a guess-mode challenge (SPEC §4c); no model is called."""
    challenge = await run_orm(_visible, slug)
    outcome: dict = {"answer": request.POST.get("answer", "")}
    status, headers = 200, {}
    try:
        outcome["result"] = await attempt_guess_async(
            challenge=challenge,
            account=await request.auser(),
            answer=outcome["answer"],
            ip=client_ip(request),
            source=ChallengeAttempt.Source.WEB,
        )
        outcome["guessed"] = True
    except ApplicationError as exc:
        outcome["error"] = exc.message
        status, headers = exc.status, exc.headers
    return await run_orm(_play_response, request, challenge, outcome, status, headers)


@require_POST
@login_required
def challenge_hint_unlock(request, slug: str, hint_id: str):
    """The confirmed unlock of a paid hint: the hint's card comes back with its body (htmx),
    or the page does, at the hint, without JavaScript."""
    challenge = _visible(slug)
    ids = valid_uuids([hint_id])
    hint = hint_visible_by_id(hint_id=ids[0]) if ids else None
    if hint is None or hint.challenge_id != challenge.id:
        raise Http404("No such hint.")
    error, status = "", 200
    try:
        hint_unlock(hint=hint, account=request.user)
        hint.unlocked = True
    except ApplicationError as exc:
        error, status = exc.message, exc.status
    if not request.headers.get("HX-Request"):
        if error:
            context = {**_page_context(request, challenge), "hint_error": error}
            return render(request, "challenges/challenge.html", context, status=status)
        page = reverse("challenge-page", args=[challenge.slug])
        return HttpResponseRedirect(f"{page}#hint-{hint.id}")
    ordered = hints_for_player(challenge=challenge, end_user=None).values_list("id", flat=True)
    number = list(ordered).index(hint.id) + 1
    context = {
        "challenge": challenge,
        "item": _page_hint(hint, number),
        "can_unlock": not error,
        "item_error": error,
    }
    return render(request, "challenges/_hint.html", context, status=status)


def _play_response(request, challenge: Challenge, outcome: dict, status: int, headers: dict):
    if request.headers.get("HX-Request"):
        context = {**_board_context(request, challenge), **outcome}
        template = "challenges/_play_result.html"
    else:
        # Without JavaScript the form posts normally and gets the whole page back.
        context = {**_page_context(request, challenge), **outcome}
        template = "challenges/challenge.html"
    response = render(request, template, context, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


@require_GET
def challenge_leaderboard(request, slug: str):
    """The board section the page polls. It is personal (own row, own rank), so its ETag is
    of these very bytes and only the viewer's browser may keep it."""
    challenge = _visible(slug)
    end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
    response = render(
        request, "challenges/_leaderboard.html", _leaderboard_context(request, challenge, end_user)
    )
    patch_cache_control(response, private=True, no_cache=True)
    set_response_etag(response)
    return get_conditional_response(request, etag=response["ETag"], response=response)


@require_POST
@login_required
def challenge_appeal(request, slug: str, attempt_id: str):
    """The appeal button on a failed attempt in the player's history (SPEC §10)."""
    challenge = _visible(slug)
    try:
        attempt_appeal(
            attempt_id=uuid_or_404(attempt_id),
            account=request.user,
            note=request.POST.get("note", ""),
        )
        messages.success(request, "Your appeal is filed: the creator will review the attempt.")
    except ApplicationError as exc:
        messages.error(request, exc.message)
    return redirect(reverse("challenge-page", args=[challenge.slug]) + "#history")
