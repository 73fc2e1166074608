"""The site-wide scoreboard (/scoreboard/) with its graph, and a player's page."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import render
from django.templatetags.static import static
from django.utils import timezone
from django.views.decorators.http import require_GET

from challenges.selectors.scoreboard import (
    POINTS_PER_SOLVE,
    ScoreTimeline,
    player_page,
    scoreboard_challenge_ids,
    scoreboard_standings,
    scoreboard_timelines,
    scoreboard_workspaces,
)
from challenges.selectors.standings import board_filters, board_view
from players.selectors import brackets_of_workspace

STANDINGS_LIMIT = 50
GRAPH_WIDTH, GRAPH_HEIGHT = 800, 300
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 48, 16, 12, 28


@dataclass(frozen=True)
class GraphLine:
    player: str
    end_user_id: str
    points: str  # the SVG polyline's "x,y x,y …"
    colour: int


@dataclass(frozen=True)
class Graph:
    width: int
    height: int
    lines: list[GraphLine]
    y_ticks: list[tuple[float, int]]
    x_ticks: list[tuple[float, str]]
    plot_left: int
    plot_right: int
    plot_top: int
    plot_bottom: int


def score_graph(timelines: list[ScoreTimeline], *, now: datetime) -> Graph | None:
    """Step lines of each leader's points over time (up for a solve, down for a hint paid
    for), laid out for an inline SVG."""
    moments = [moment for line in timelines for moment, _ in line.steps]
    if not moments:
        return None
    start, end = min(moments), max(max(moments), now)
    span = max((end - start).total_seconds(), 60.0)
    start = start - timedelta(seconds=span * 0.04)
    span = (end - start).total_seconds()
    totals = [0]
    for line in timelines:
        total = 0
        for _, points in line.steps:
            total += points
            totals.append(total)
    top_score, low_score = max(max(totals), POINTS_PER_SOLVE), min(totals)
    left, right = PAD_LEFT, GRAPH_WIDTH - PAD_RIGHT
    top, bottom = PAD_TOP, GRAPH_HEIGHT - PAD_BOTTOM

    def x_of(moment: datetime) -> float:
        return round(left + (moment - start).total_seconds() / span * (right - left), 1)

    def y_of(score: int) -> float:
        return round(bottom - (score - low_score) / (top_score - low_score) * (bottom - top), 1)

    lines = []
    for index, line in enumerate(timelines):
        score = 0
        coordinates = [(x_of(start), y_of(0))]
        for moment, points in line.steps:
            coordinates.append((x_of(moment), y_of(score)))
            score += points
            coordinates.append((x_of(moment), y_of(score)))
        coordinates.append((x_of(end), y_of(score)))
        lines.append(
            GraphLine(
                player=line.player,
                end_user_id=line.end_user_id,
                points=" ".join(f"{x},{y}" for x, y in coordinates),
                colour=index,
            )
        )
    step = max(1, (top_score - low_score) // POINTS_PER_SOLVE // 4) * POINTS_PER_SOLVE
    first_tick = -(-low_score // step) * step
    y_ticks = [(y_of(value), value) for value in range(first_tick, top_score + 1, step)]
    label = "%H:%M" if span < 2 * 86400 else "%b %d"
    x_ticks = [
        (x_of(moment), timezone.localtime(moment).strftime(label))
        for moment in (start + timedelta(seconds=span * i / 4) for i in range(5))
    ]
    return Graph(
        width=GRAPH_WIDTH,
        height=GRAPH_HEIGHT,
        lines=lines,
        y_ticks=y_ticks,
        x_ticks=x_ticks,
        plot_left=left,
        plot_right=right,
        plot_top=top,
        plot_bottom=bottom,
    )


def _scoreboard_context(request: HttpRequest, workspace_slug: str | None) -> dict:
    workspaces = scoreboard_workspaces()
    if workspace_slug is None:
        workspace = workspaces[0] if workspaces else None
    else:
        workspace = next((ws for ws in workspaces if ws.slug == workspace_slug), None)
        if workspace is None:
            raise Http404("No scoreboard for this workspace.")
    standings, graph, challenge_ids, view, brackets = [], None, [], None, []
    if workspace is not None:
        view = board_view(
            workspace=workspace,
            viewer=request.user,
            **board_filters(request.GET, page=True),
        )
    if view is not None and view.shown:
        standings = scoreboard_standings(workspace=workspace, limit=STANDINGS_LIMIT, view=view)
        timelines = scoreboard_timelines(workspace=workspace, standings=standings, view=view)
        # A frozen graph ends at the freeze: its last step is the standings shown.
        graph = score_graph(timelines, now=view.cutoff or timezone.now())
        # A bracket's (or the agents' or humans') standings are read when the page
        # (re)loads; the live frames carry the whole board.
        challenge_ids = [] if view.filtered else scoreboard_challenge_ids(workspace=workspace)
        brackets = brackets_of_workspace(workspace_id=workspace.id)
    return {
        "workspaces": workspaces,
        "workspace": workspace,
        "board": view,
        "brackets": brackets,
        "frozen_at": view.cutoff if view else None,
        "standings": standings,
        "graph": graph,
        "points_per_solve": POINTS_PER_SOLVE,
        "live_paths": " ".join(f"/ws/leaderboards/challenge/{pk}/" for pk in challenge_ids),
    }


def _status(context: dict) -> int:
    board = context["board"]
    return 404 if board is not None and not board.shown else 200


@require_GET
def scoreboard_page(request: HttpRequest, workspace_slug: str | None = None) -> HttpResponse:
    context = _scoreboard_context(request, workspace_slug)
    return render(request, "challenges/scoreboard.html", context, status=_status(context))


@require_GET
def scoreboard_partial(request: HttpRequest, workspace_slug: str) -> HttpResponse:
    """The standings and graph alone, swapped in by htmx when a board of the workspace moves."""
    context = _scoreboard_context(request, workspace_slug)
    return render(request, "challenges/_scoreboard.html", context, status=_status(context))


@require_GET
def player_page_view(request: HttpRequest, end_user_id: str) -> HttpResponse:
    page = player_page(end_user_id=end_user_id, viewer=request.user)
    if page is None:
        raise Http404("No such player.")
    return render(request, "challenges/player.html", {"page": page})


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponsePermanentRedirect(static("favicon.ico"))
