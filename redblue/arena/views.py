"""Arena pages: /arena/ (types, open sessions, boards) and /arena/<session>/ (transcript)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from redblue.arena import selectors, services
from redblue.arena.charts import scatter_svg
from redblue.arena.services import ArenaError
from redblue.models import ArenaSession

OPEN_SESSIONS_SHOWN = 20
BOARD_ROWS = 10


@require_GET
def arena_home(request: HttpRequest) -> HttpResponse:
    metadata = selectors.arena_metadata_all()
    open_sessions = list(
        selectors.arena_sessions(status=ArenaSession.Status.OPEN)[:OPEN_SESSIONS_SHOWN]
    )
    boards = []
    for name, meta in metadata.items():
        points = selectors.scatter_points(challenge_type=name)
        boards.append(
            {
                "name": name,
                "meta": meta,
                "strategies": selectors.scoring_for_type(challenge_type=name, limit=BOARD_ROWS),
                # A chart only once a game is scored: an empty plot says nothing.
                "scatter": scatter_svg(points=points, title=f"{name}: security versus utility")
                if points
                else "",
            }
        )
    free = [
        {
            "session": session,
            "free_invites": [code for code in session.invites if code not in session.players],
        }
        for session in open_sessions
    ]
    return render(
        request,
        "redblue/arena/home.html",
        {
            "boards": boards,
            "open_sessions": free,
            "global_board": selectors.scoring_global(limit=BOARD_ROWS),
        },
    )


@login_required
@require_POST
def arena_create(request: HttpRequest, type_name: str) -> HttpResponse:
    try:
        session = services.arena_session_create(type_name=type_name)
    except ArenaError as refusal:
        messages.error(request, refusal.message)
        return redirect("arena-home")
    return redirect("arena-session", session_id=session.pk)


@login_required
@require_POST
def arena_join(request: HttpRequest, invite: str) -> HttpResponse:
    user = services.arena_user_for_account(account=request.user)
    try:
        joined = services.arena_join(invite=invite, user_id=user.user_id)
    except ArenaError as refusal:
        messages.error(request, refusal.message)
        return redirect("arena-home")
    return redirect("arena-session", session_id=joined.session.pk)


@require_GET
def arena_session_page(request: HttpRequest, session_id) -> HttpResponse:
    session = selectors.arena_session(session_id=session_id)
    if session is None:
        raise Http404("No such arena session.")
    viewer = selectors.site_viewer_invite(session=session, account=request.user)
    names = selectors.session_player_names(session=session)
    state = selectors.session_json(session)["state"]
    transcript = [
        {**message, "from_name": names.get(message["from"], message["from"]),
         "to_name": names.get(message["to"], message["to"]),
         "content": _named(message["content"], names)}
        for message in selectors.transcript(session=session, viewer=viewer)
    ]  # fmt: skip
    return render(
        request,
        "redblue/arena/session.html",
        {
            "session": session,
            "state": state,
            "meta": selectors.arena_metadata(name=session.challenge_type_id) or {},
            "viewer_name": names.get(viewer) if viewer else None,
            "viewer": viewer,
            "others": [(code, names[code]) for code in session.players if code != viewer],
            "names": names,
            "scores": [
                {"name": names.get(code, f"Player {seat}"), **score}
                for seat, (code, score) in enumerate(
                    zip(session.players, state.get("scores") or [], strict=False), start=1
                )
            ],
            "transcript": transcript,
        },
    )


def _named(text: str, names: dict[str, str]) -> str:
    """The operator's text with each seat's invite code replaced by the seat's name."""
    for code, name in names.items():
        text = text.replace(code, name)
    return text


@login_required
@require_POST
def arena_send(request: HttpRequest, session_id) -> HttpResponse:
    session = selectors.arena_session(session_id=session_id)
    if session is None:
        raise Http404("No such arena session.")
    viewer = selectors.site_viewer_invite(session=session, account=request.user)
    content = request.POST.get("content", "").strip()[:10_000]
    method = request.POST.get("method", "").strip()[:64]
    to = request.POST.get("to", "").strip()[:100]
    try:
        if viewer is None:
            raise ArenaError("Join this session to play in it.")
        if not content:
            raise ArenaError("Write something to send.")
        if method:
            services.arena_message_send(
                session_id=session.pk, sender=viewer, method=method, content=content
            )
        else:
            services.arena_chat_send(session_id=session.pk, sender=viewer, content=content, to=to)
    except ArenaError as refusal:
        messages.error(request, refusal.message)
    return redirect("arena-session", session_id=session.pk)
