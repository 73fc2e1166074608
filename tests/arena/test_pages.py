"""The arena pages, the live transcript socket, the admin, the demo step and pruning."""

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from redblue.arena.services import arena_chat_send, arena_join, arena_user_for_account
from redblue.arena.tasks import PRUNE_TASK, arena_prune_stale_sessions
from redblue.models import ArenaSession
from redblue.routing import websocket_urlpatterns
from tests.arena.conftest import Agent, create_session
from tests.factories import make_player


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_a_player_opens_joins_and_chats_from_the_browser(arena_auth):
    alice, bob = make_player("alice@example.com"), make_player("bob@example.com")
    alice_page, bob_page = logged_in(alice), logged_in(bob)

    opened = alice_page.post("/arena/new/psi/")
    session = ArenaSession.objects.get()
    home = bob_page.get("/arena/").content.decode()
    assert opened.status_code == 302
    assert "Start a game of Private Set Intersection" in home
    # No game scored yet: a line says so instead of an empty chart.
    assert "No game of this kind has been scored yet." in home
    assert 'class="arena-scatter"' not in home
    for page, invite in ((alice_page, session.invites[0]), (bob_page, session.invites[1])):
        assert page.post(f"/arena/join/{invite}/").url == f"/arena/{session.pk}/"

    alice_page.post(f"/arena/{session.pk}/send/", {"content": "psst", "to": session.invites[1]})
    bob_view = bob_page.get(f"/arena/{session.pk}/").content.decode()
    stranger_view = Client().get(f"/arena/{session.pk}/").content.decode()
    alice_view = alice_page.get(f"/arena/{session.pk}/").content.decode()

    assert "psst" in bob_view and "psst" not in stranger_view
    alice_set = ", ".join(map(str, session.game_state["userSets"][0]))
    assert alice_set in alice_view and alice_set not in bob_view and alice_set not in stranger_view
    assert "(private message)" in stranger_view
    refused = alice_page.post(f"/arena/{session.pk}/send/", {"content": "x", "method": "guess"})
    assert refused.status_code == 302
    assert Client().post(f"/arena/{session.pk}/send/", {"content": "hi"}).status_code == 302
    assert bob_page.get("/arena/00000000-0000-0000-0000-000000000000/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_live_transcript_pushes_new_messages_redacted_per_viewer(arena_auth):
    alice, stranger = make_player("alice@example.com"), make_player("eve@example.com")
    session = ArenaSession.objects.get(pk=create_session(Client(), "psi")["id"])
    alice_user = arena_user_for_account(account=alice)
    arena_join(invite=session.invites[0], user_id=alice_user.user_id)
    arena_join(invite=session.invites[1], user_id="bob")

    async def watch(user):
        communicator = WebsocketCommunicator(
            URLRouter(websocket_urlpatterns), f"/ws/arena/{session.pk}/"
        )
        communicator.scope["user"] = user
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        return communicator

    async def scenario():
        mine, theirs = await watch(alice), await watch(stranger)
        first_mine = await mine.receive_json_from(timeout=5)
        first_theirs = await theirs.receive_json_from(timeout=5)
        await database_sync_to_async(arena_chat_send)(
            session_id=session.pk,
            sender=session.invites[1],
            content="for alice",
            to=session.invites[0],
        )
        pushed_mine = await mine.receive_json_from(timeout=5)
        pushed_theirs = await theirs.receive_json_from(timeout=5)
        await mine.disconnect()
        await theirs.disconnect()
        return first_mine, first_theirs, pushed_mine, pushed_theirs

    first_mine, first_theirs, pushed_mine, pushed_theirs = async_to_sync(scenario)()

    assert first_mine["type"] == "transcript" and first_mine["viewer"] == session.invites[0]
    assert first_mine["messages"][0]["content"].startswith("Your private set is")
    assert first_theirs["messages"][0]["redacted"] is True
    assert [m["content"] for m in pushed_mine["messages"]] == ["for alice"]
    assert (
        pushed_theirs["messages"][0]["content"] == ""
        and pushed_theirs["state"]["status"] == "active"
    )


@pytest.mark.django_db
def test_the_admin_lists_types_sessions_with_transcripts_and_scores(arena_auth):
    admin = get_user_model().objects.create_superuser("root@example.com", "root@example.com", "pw")
    session = create_session(Client(), "psi")
    Agent().join(session["invites"][0])
    page = logged_in(admin)

    for path in (
        "/admin/redblue/arenachallengetype/",
        "/admin/redblue/arenasession/",
        f"/admin/redblue/arenasession/{session['id']}/change/",
        "/admin/redblue/scoringentry/",
        "/admin/redblue/arenauser/",
    ):
        assert page.get(path).status_code == 200, path
    assert (
        "Your private set is"
        in page.get(f"/admin/redblue/arenasession/{session['id']}/change/").content.decode()
    )


@pytest.mark.django_db
def test_the_demo_step_installs_every_type_and_one_open_session_each(capsys):
    call_command("arena_demo")
    call_command("arena_demo")

    assert ArenaSession.objects.filter(status="open").count() == 5
    assert "arena secret-keeper: kept http://" in capsys.readouterr().out


@pytest.mark.django_db
def test_the_beat_schedule_prunes_only_stale_open_sessions():
    stale = ArenaSession.objects.get(pk=create_session(Client(), "psi")["id"])
    ArenaSession.objects.filter(pk=stale.pk).update(
        created_at=timezone.now() - timedelta(minutes=11)
    )
    fresh = create_session(Client(), "psi")["id"]

    assert PeriodicTask.objects.get(task=PRUNE_TASK).enabled
    assert arena_prune_stale_sessions.delay().get() == 1
    assert [str(pk) for pk in ArenaSession.objects.values_list("pk", flat=True)] == [fresh]
