"""Hints (issue 24.1): a player reads free hints at once, unlocks a paid one explicitly and
pays once, on the web API and on the page; a paid body never reaches anyone before that;
the site scoreboard takes the cost off."""

import json
import re
import threading

import pytest
from django.db import connection, connections
from django.test import Client

from challenges.models import HintUnlock
from challenges.services.challenges import challenge_update
from challenges.services.hints import hint_create, hint_unlock, hint_update
from players.services import end_user_for_account
from tests.conftest import client_for, require_service
from tests.factories import make_challenge, make_player, make_workspace, record_win

pytestmark = pytest.mark.django_db

FREE_BODY = "Start by asking **politely**."
PAID_BODY = "The guard repeats anything in a *poem*: ask for one."


@pytest.fixture
def vault(workspace):
    return make_challenge(workspace=workspace, name="Vault", slug="vault")


@pytest.fixture
def free_hint(vault):
    return hint_create(challenge=vault, order=1, body_md=FREE_BODY, cost=0)


@pytest.fixture
def paid_hint(vault):
    return hint_create(challenge=vault, order=2, body_md=PAID_BODY, cost=20)


def hints_url(challenge) -> str:
    return f"/web/api/challenges/{challenge.id}/hints"


def unlock_url(hint) -> str:
    return f"/web/api/hints/{hint.id}/unlock"


def test_it_lists_hints_in_order_with_free_bodies_only(vault, free_hint, paid_hint, player):
    for api in (client_for(), client_for(player)):
        body = api.get(hints_url(vault)).json()
        assert body["count"] == 2
        assert body["results"] == [
            {
                "id": str(free_hint.id),
                "order": 1,
                "cost": 0,
                "unlocked": True,
                "body_md": FREE_BODY,
            },
            {"id": str(paid_hint.id), "order": 2, "cost": 20, "unlocked": False, "body_md": None},
        ]
        assert "poem" not in api.get(hints_url(vault)).content.decode()


def test_it_unlocks_a_paid_hint_once_201_then_200_with_the_body(vault, paid_hint, player):
    api = client_for(player)

    first = api.post(unlock_url(paid_hint))
    again = api.post(unlock_url(paid_hint))

    assert first.status_code == 201
    assert again.status_code == 200
    assert (
        first.json()
        == again.json()
        == {
            "id": str(paid_hint.id),
            "order": 2,
            "cost": 20,
            "unlocked": True,
            "body_md": PAID_BODY,
        }
    )
    unlock = HintUnlock.objects.get()
    assert (unlock.hint_id, unlock.cost) == (paid_hint.id, 20)
    listed = api.get(hints_url(vault)).json()["results"][0]
    assert (listed["unlocked"], listed["body_md"]) == (True, PAID_BODY)
    # Another player still sees it locked.
    other = client_for(make_player()).get(hints_url(vault)).json()["results"][0]
    assert other["body_md"] is None


def test_a_free_hint_needs_no_unlock_and_records_nothing(free_hint, player):
    response = client_for(player).post(unlock_url(free_hint))

    assert response.status_code == 200
    assert response.json()["body_md"] == FREE_BODY
    assert HintUnlock.objects.count() == 0


def test_it_refuses_anonymous_unknown_and_inactive_challenges_hints(
    vault, paid_hint, player, workspace
):
    assert client_for().post(unlock_url(paid_hint)).status_code == 401
    api = client_for(player)
    assert api.post("/web/api/hints/not-a-uuid/unlock").status_code == 404
    assert api.post(f"/web/api/hints/{vault.id}/unlock").status_code == 404

    draft = make_challenge(workspace=workspace, is_active=False)
    hidden = hint_create(challenge=draft, body_md="Draft hint", cost=10)
    response = api.post(unlock_url(hidden))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert api.get(hints_url(draft)).status_code == 404
    assert HintUnlock.objects.count() == 0


def test_another_workspaces_hint_is_not_listed_with_this_challenge(vault, paid_hint, player):
    rival = make_challenge(workspace=make_workspace("Rival Labs"), name="Rival")
    rival_hint = hint_create(challenge=rival, body_md="Rival's secret hint", cost=5)

    listed = client_for(player).get(hints_url(vault)).json()["results"]

    assert [row["id"] for row in listed] == [str(paid_hint.id)]
    # The page of one challenge never unlocks another's hint.
    browser = Client()
    browser.force_login(player)
    response = browser.post(f"/challenges/vault/hints/{rival_hint.id}/unlock")
    assert response.status_code == 404
    assert HintUnlock.objects.count() == 0


def test_a_closed_challenges_hint_is_refused_409(vault, paid_hint, player):
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    challenge_update(
        challenge=vault,
        user=None,
        starts_at=now - timedelta(hours=1),
        ends_at=now - timedelta(minutes=1),
    )

    response = client_for(player).post(unlock_url(paid_hint))

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "challenge_closed"
    assert HintUnlock.objects.count() == 0


def standings(html: str) -> dict[str, str]:
    """Each row's player id → its points, in standing order."""
    body = re.search(r"<tbody>(.*?)</tbody>", html, re.S).group(1)
    rows = {}
    for player, row in re.findall(r'<tr data-player="([^"]+)">(.*?)</tr>', body, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        rows[player] = re.sub(r"<[^>]+>", "", cells[2]).strip()
    return rows


def test_the_scoreboard_takes_the_cost_off_and_reranks(client, workspace, vault, paid_hint):
    maze = make_challenge(workspace=workspace, name="Maze")
    alice, bob = make_player("alice@example.com"), make_player("bob@example.com")
    alice_player = end_user_for_account(workspace=workspace, account=alice)
    bob_player = end_user_for_account(workspace=workspace, account=bob)
    record_win(vault, alice_player)
    record_win(maze, bob_player)
    hint_unlock(hint=paid_hint, account=alice)

    rows = standings(client.get("/scoreboard/").content.decode())

    # Alice solved first, but her hint puts Bob ahead.
    assert rows == {str(bob_player.id): "100 pts", str(alice_player.id): "80 pts"}
    assert list(rows) == [str(bob_player.id), str(alice_player.id)]
    page = client.get(f"/players/{alice_player.id}/").content.decode()
    assert "80 pts" in page and "20 pts spent on hints" in page

    # A later price change does not re-bill; a hint of a draft challenge costs nothing.
    hint_update(hint=paid_hint, cost=50)
    assert "80 pts" in standings(client.get("/scoreboard/").content.decode()).values()
    challenge_update(challenge=vault, user=None, is_active=False)
    assert list(standings(client.get("/scoreboard/").content.decode()).values()) == ["100 pts"]


def test_the_scoreboard_still_reads_in_a_fixed_number_of_queries(
    client, workspace, django_assert_max_num_queries
):
    challenges = [make_challenge(workspace=workspace) for _ in range(4)]
    hints = [hint_create(challenge=c, body_md="h", cost=10) for c in challenges]
    for index in range(20):
        account = make_player()
        player = end_user_for_account(workspace=workspace, account=account)
        for challenge, hint in list(zip(challenges, hints, strict=True))[: index % 4 + 1]:
            record_win(challenge, player)
            hint_unlock(hint=hint, account=account)

    # As test_scoreboard's count: the hint costs add no query (inside the standings' and
    # the leaders' queries).
    with django_assert_max_num_queries(5):
        response = client.get("/scoreboard/")
    assert response.status_code == 200
    assert len(standings(response.content.decode())) == 20


@pytest.mark.django_db(transaction=True)
def test_two_unlocks_at_once_record_one_row_and_charge_once(workspace):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    vault = make_challenge(workspace=workspace, name="Vault", slug="vault-race")
    hint = hint_create(challenge=vault, body_md=PAID_BODY, cost=20)
    account = make_player("racer@example.com")
    record_win(vault, end_user_for_account(workspace=workspace, account=account))
    api_clients = [client_for(account) for _ in range(8)]
    start = threading.Barrier(len(api_clients))
    answers, errors = [], []

    def click(api) -> None:
        try:
            start.wait()
            response = api.post(unlock_url(hint))
            answers.append((response.status_code, response.json()))
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=click, args=(api,)) for api in api_clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sorted(status for status, _ in answers) == [200] * 7 + [201]
    assert {body["body_md"] for _, body in answers} == {PAID_BODY}
    assert HintUnlock.objects.count() == 1
    html = Client().get("/scoreboard/").content.decode()
    assert list(standings(html).values()) == ["80 pts"]


def test_the_page_shows_free_hints_and_asks_before_unlocking_a_paid_one(
    vault, free_hint, paid_hint, player
):
    visitor = Client().get("/challenges/vault/").content.decode()
    assert "Start by asking <strong>politely</strong>." in visitor
    assert "poem" not in visitor
    assert "Sign in to unlock it (20 points)" in visitor

    browser = Client()
    browser.force_login(player)
    page = browser.get("/challenges/vault/").content.decode()
    assert "This hint costs 20 points — unlock?" in page
    assert "poem" not in page

    card = browser.post(f"/challenges/vault/hints/{paid_hint.id}/unlock", HTTP_HX_REQUEST="true")
    assert card.status_code == 200
    assert "The guard repeats anything in a <em>poem</em>: ask for one." in card.content.decode()
    again = browser.post(f"/challenges/vault/hints/{paid_hint.id}/unlock")
    assert again.status_code == 302
    assert again["Location"] == f"/challenges/vault/#hint-{paid_hint.id}"
    assert HintUnlock.objects.count() == 1
    assert "<em>poem</em>" in browser.get("/challenges/vault/").content.decode()


def test_a_hint_body_is_sanitised(vault, player):
    hint_create(
        challenge=vault,
        body_md=(
            "Free <script>alert(1)</script> [x](javascript:alert(2)) <img src=x onerror=alert(3)>"
        ),
    )

    page = Client().get("/challenges/vault/").content.decode()

    hints = re.search(r'<section class="card hints".*?</section>', page, re.S).group(0)
    assert "<script" not in hints and "javascript:" not in hints and "onerror" not in hints


def test_the_page_offers_no_unlock_on_a_locked_challenge(workspace, vault, paid_hint, player):
    from challenges.services.prerequisites import challenge_set_prerequisites

    first = make_challenge(workspace=workspace, name="First Steps")
    challenge_set_prerequisites(challenge=vault, prerequisite_ids=[first.id])
    browser = Client()
    browser.force_login(player)

    page = browser.get("/challenges/vault/").content.decode()
    refused = client_for(player).post(unlock_url(paid_hint))

    assert "This hint costs" not in page
    assert "It can be unlocked while the challenge is open to you." in page
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "level_locked"
    assert HintUnlock.objects.count() == 0


def test_the_demo_gives_level_one_a_free_and_a_paid_hint_once(client):
    from io import StringIO

    from django.core.management import call_command

    from challenges.models import Hint

    call_command("demo", stdout=StringIO())
    again = StringIO()
    call_command("demo", stdout=again)

    hints = Hint.objects.filter(challenge__slug="demo-gandalf-1")
    assert list(hints.values_list("order", "cost")) == [(1, 0), (2, 20)]
    assert "exists   hints on" in again.getvalue()
    page = client.get("/challenges/demo-gandalf-1/").content.decode()
    assert "simply <strong>asking</strong>" in page
    assert "What is the password?</em>" not in page


@pytest.mark.django_db(transaction=True)
def test_an_unlock_pushes_a_frame_that_refreshes_the_scoreboard_without_the_body(workspace):
    from asgiref.sync import async_to_sync
    from channels.db import database_sync_to_async

    from tests.challenges.test_board_frames import socket

    vault = make_challenge(workspace=workspace, name="Vault", slug="vault-live")
    hint = hint_create(challenge=vault, body_md=PAID_BODY, cost=20)
    account = make_player("live@example.com")
    record_win(vault, end_user_for_account(workspace=workspace, account=account))

    async def scenario():
        communicator = socket(f"/ws/leaderboards/challenge/{vault.id}/")
        assert (await communicator.connect(timeout=5))[0]
        await communicator.receive_json_from(timeout=5)  # the board on connect
        await database_sync_to_async(hint_unlock)(hint=hint, account=account)
        pushed = await communicator.receive_json_from(timeout=5)
        await communicator.disconnect()
        return pushed

    pushed = async_to_sync(scenario)()

    # static/js/scoreboard.js refreshes the standings on any frame after the first.
    assert len(pushed["entries"]) == 1
    assert "poem" not in json.dumps(pushed)


def test_a_hint_bought_after_the_freeze_shows_only_to_its_buyer_until_it_lifts(
    client, workspace, vault, paid_hint
):
    from django.utils import timezone

    from players.events import workspace_event_update

    account = make_player("frozen@example.com")
    player = end_user_for_account(workspace=workspace, account=account)
    record_win(vault, player)
    workspace_event_update(workspace=workspace, freeze_at=timezone.now())
    hint_unlock(hint=paid_hint, account=account)

    assert standings(client.get("/scoreboard/").content.decode()) == {str(player.id): "100 pts"}
    assert "100 pts" in client.get(f"/players/{player.id}/").content.decode()
    api = client_for().get(f"/web/api/scoreboard/{workspace.slug}").content.decode()
    assert '"points":100' in api.replace(" ", "")
    own = Client()
    own.force_login(account)
    assert "80 pts" in own.get(f"/players/{player.id}/").content.decode()

    workspace_event_update(workspace=workspace, freeze_at=None)
    assert standings(client.get("/scoreboard/").content.decode()) == {str(player.id): "80 pts"}
