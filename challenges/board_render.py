"""A challenge's board drawn once from one read of its top rows: the web API's JSON body
and its ETag, the board table's HTML (the part every viewer sees alike) and the live frame."""

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson
from django.conf import settings
from django.template.loader import render_to_string

from challenges.api.serializers import LeaderboardSerializer
from challenges.models import Challenge
from challenges.selectors.leaderboards import (
    LeaderboardRow,
    leaderboard_for_challenge,
    leaderboard_standings,
)
from challenges.selectors.standings import BoardView, board_view_public


@dataclass(frozen=True)
class RenderedBoard:
    body: bytes
    etag: str
    html: str
    # The live frame: the standings a socket receives, with `html` among them.
    standings: dict[str, Any]
    view: BoardView


def board_etag(body: bytes) -> str:
    """A strong ETag: the same body always has the same tag, another body another one."""
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def board_body(
    *,
    challenge: Challenge,
    rows: list[LeaderboardRow],
    limit: int,
    view: BoardView,
    codename: str = "",
) -> bytes:
    """The web API's answer for `?limit=`: the serializer the OpenAPI schema documents."""
    board = {
        **({"target": codename} if codename else {}),
        "challenge_id": challenge.id,
        "scoring_strategy": challenge.scoring_strategy,
        "frozen_at": view.cutoff,
        "bracket": view.bracket.slug if view.bracket else None,
        "players": view.players or "all",
        "limit": limit,
        "entries": rows,
    }
    return orjson.dumps(LeaderboardSerializer(board).data)


def board_body_for_limit(
    *, challenge: Challenge, limit: int, view: BoardView, codename: str = ""
) -> bytes:
    return board_body(
        challenge=challenge,
        rows=leaderboard_for_challenge(
            challenge=challenge, limit=limit, view=view, codename=codename
        ),
        limit=limit,
        view=view,
        codename=codename,
    )


def board_html(*, challenge: Challenge, rows: list[LeaderboardRow], view: BoardView) -> str:
    # No viewer's own row is marked: the page's script marks it from a data attribute.
    return render_to_string(
        "challenges/_board_rows.html",
        {
            "challenge": challenge,
            "leaderboard": rows,
            "own_end_user_id": "",
            "frozen_at": view.cutoff,
        },
    )


def board_render(*, challenge: Challenge, players: str = "") -> RenderedBoard:
    """The public default board (LEADERBOARD_DEFAULT_LIMIT rows, every bracket, frozen while
    the event is; `players`: the agents' or humans' part) in every form it is served in, and
    the view it was drawn for."""
    view = board_view_public(workspace=challenge.workspace, players=players)
    limit = settings.LEADERBOARD_DEFAULT_LIMIT
    rows = leaderboard_for_challenge(challenge=challenge, limit=limit, view=view)
    body = board_body(challenge=challenge, rows=rows, limit=limit, view=view)
    html = board_html(challenge=challenge, rows=rows, view=view)
    standings = leaderboard_standings(challenge=challenge, rows=rows, view=view)
    standings["html"] = html
    # Who may receive the frame: a socket whose viewer it excludes closes (consumers.py).
    standings["audience"] = challenge.workspace.board_visibility
    return RenderedBoard(
        body=body, etag=board_etag(body), html=html, standings=standings, view=view
    )
