"""The public page of a challenge collection: /collections/<slug>/."""

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from challenges.selectors.collections import (
    collection_conquest_place,
    collection_progress,
    collection_public_by_slug,
    leaderboard_for_collection,
)
from challenges.selectors.levels import prerequisite_locked_ids_of_account
from challenges.selectors.standings import board_filters, board_view
from core.errors import ApplicationError
from core.markdown import render_markdown
from core.theme import theme_style
from players.selectors import brackets_of_workspace


@require_GET
def collection_page(request: HttpRequest, slug: str) -> HttpResponse:
    collection = collection_public_by_slug(slug=slug)
    if collection is None:
        raise Http404("No such collection.")
    view = board_view(
        workspace=collection.workspace,
        viewer=request.user,
        **board_filters(request.GET, page=True),
    )
    progress = collection_progress(collection=collection, account=request.user)
    challenges = []
    # Prerequisites may lie outside the collection: every solve of the player counts.
    waiting = prerequisite_locked_ids_of_account(
        account=request.user,
        challenge_ids=[item.challenge_id for item in collection.ordered_items],
    )
    for item in collection.ordered_items:
        solved = item.challenge_id in progress.solved_challenge_ids
        # In order, a level is open when the one before it is solved (SPEC §4c); any
        # challenge waits for its prerequisites.
        locked = (
            collection.in_order and bool(challenges) and not challenges[-1]["solved"]
        ) or item.challenge_id in waiting
        challenges.append({"challenge": item.challenge, "solved": solved, "locked": locked})
    leaderboard, leaderboard_unavailable = None, ""
    try:
        if view.shown:
            leaderboard = leaderboard_for_collection(
                collection=collection, limit=settings.LEADERBOARD_DEFAULT_LIMIT, view=view
            )
    except ApplicationError as error:
        leaderboard_unavailable = error.message
    return render(
        request,
        "challenges/collection.html",
        {
            "collection": collection,
            "instructions_html": mark_safe(render_markdown(collection.instructions_md)),  # noqa: S308 nh3-clean
            "theme_style": theme_style(collection.theme),
            "challenges": challenges,
            "solved_count": sum(1 for row in challenges if row["solved"]),
            "leaderboard": leaderboard,
            "leaderboard_unavailable": leaderboard_unavailable,
            "own_end_user_id": progress.end_user_id,
            "board": view,
            "frozen_at": view.cutoff,
            "brackets": brackets_of_workspace(workspace_id=collection.workspace_id),
            "conquest_place": (
                collection_conquest_place(
                    collection=collection, end_user_id=progress.end_user_id, view=view
                )
                if collection.in_order
                else None
            ),
        },
    )
