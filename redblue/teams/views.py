"""The red/blue pages: the open challenges, and one challenge's page to join a side, submit,
self-test, see your pairings and the standings."""

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET

from challenges.models import PROMPT_MAX_CHARS
from core.markdown import render_markdown
from core.theme import theme_style
from judging.category_judge import effective_suite
from players.selectors import end_user_of_account
from redblue.teams.selectors import (
    pairings_of_player,
    red_blue_challenge_visible_by_id,
    red_blue_challenges_public_with_sides,
    standings_for_challenge,
    team_of_player,
)
from redblue.teams.serializers import RedBlueAgentSerializer

PAGE_PAIRINGS = 20


@require_GET
def red_blue_list(request):
    return render(
        request,
        "redblue/teams/list.html",
        {"entries": red_blue_challenges_public_with_sides()},
    )


@require_GET
@ensure_csrf_cookie
def red_blue_page(request, challenge_id: str):
    challenge = red_blue_challenge_visible_by_id(challenge_id=challenge_id)
    if challenge is None:
        raise Http404("No such red/blue challenge.")
    end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
    suite = effective_suite(challenge.judge_suite)
    context = {
        "challenge": challenge,
        "instructions_html": render_markdown(challenge.instructions_md),
        "theme_style": theme_style(challenge.theme),
        "suite": suite,
        "standings": standings_for_challenge(
            challenge=challenge, limit=settings.LEADERBOARD_DEFAULT_LIMIT
        ),
        "team": team_of_player(challenge=challenge, end_user=end_user),
        "own_end_user_id": str(end_user.id) if end_user else "",
        "pairings": (
            pairings_of_player(challenge=challenge, end_user=end_user, limit=PAGE_PAIRINGS)
            if end_user
            else []
        ),
        "prompt_max": PROMPT_MAX_CHARS,
        # The scenario as both sides read it (never the tools' results templates).
        "agent": RedBlueAgentSerializer(challenge.agent).data if challenge.agent else None,
    }
    return render(request, "redblue/teams/challenge.html", context)
