"""The team scoreboard (/scoreboard/<workspace>/teams/ and its JSON): a challenge solved by
several members counts once, at the earliest solve; nothing of a member's attempts shows."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from challenges.models import LeaderboardEntry
from challenges.services.challenges import challenge_update
from challenges.services.hints import hint_create, hint_unlock
from players.events import workspace_event_update, workspace_freeze_lift
from players.services import end_user_for_account
from players.teams.services import team_create, team_join, team_leave, team_size_limit_set
from tests.conftest import client_for
from tests.factories import make_challenge, make_player, make_vault, record_win

pytestmark = pytest.mark.django_db

START = timezone.now() - timedelta(hours=3)


def win(challenge, end_user, *, minutes: int):
    """A win recorded `minutes` after START (the board row's solve time set to it)."""
    attempt = record_win(challenge, end_user, tokens_total=42)
    at = START + timedelta(minutes=minutes)
    LeaderboardEntry.objects.filter(attempt=attempt).update(first_succeeded_at=at, achieved_at=at)
    return at


@pytest.fixture
def event(workspace):
    vault = make_vault(workspace=workspace, secret="PAPAYA", slug="vault")
    maze = make_challenge(workspace=workspace, name="Maze", slug="maze")
    accounts = {name: make_player(f"{name}@example.com") for name in ("ada", "grace", "linus")}
    players = {
        name: end_user_for_account(workspace=workspace, account=account)
        for name, account in accounts.items()
    }
    for name, end_user in players.items():
        end_user.display_name = name.title()
        end_user.save(update_fields=["display_name"])
    herrings = team_create(account=accounts["ada"], workspace=workspace, name="Herrings")
    team_join(account=accounts["grace"], invite_code=herrings.invite_code)
    whales = team_create(account=accounts["linus"], workspace=workspace, name="Whales")
    return {
        "workspace": workspace,
        "vault": vault,
        "maze": maze,
        "accounts": accounts,
        "players": players,
        "herrings": herrings,
        "whales": whales,
    }


def rows(html: str) -> list[list[str]]:
    body = re.search(r"<tbody>(.*?)</tbody>", html, re.S).group(1)
    return [
        [
            " ".join(re.sub(r"<[^>]+>", " ", cell).split())
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def test_a_challenge_two_members_solved_counts_once_at_the_first_solve(event):
    ada, grace, linus = (event["players"][name] for name in ("ada", "grace", "linus"))
    win(event["vault"], grace, minutes=30)
    first = win(event["vault"], ada, minutes=10)
    win(event["vault"], linus, minutes=20)
    win(event["maze"], linus, minutes=40)

    body = client_for().get(f"/web/api/scoreboard/{event['workspace'].slug}/teams").json()

    assert body["points_per_solve"] == 100
    teams = body["teams"]
    assert [(t["rank"], t["team"], t["points"], t["solves"]) for t in teams] == [
        (1, "Whales", 200, 2),
        (2, "Herrings", 100, 1),
    ]
    assert teams[1]["members"] == ["Ada", "Grace"]
    assert teams[1]["solved"] == [
        {
            "challenge": "Vault",
            "challenge_slug": "vault",
            "solved_at": first.isoformat().replace("+00:00", "Z"),
        }
    ]


def test_a_hint_two_members_unlocked_costs_the_team_once(event):
    ada, linus = event["players"]["ada"], event["players"]["linus"]
    hint = hint_create(challenge=event["maze"], order=1, body_md="Look left.", cost=30)
    cheap = hint_create(challenge=event["vault"], order=1, body_md="Ask nicely.", cost=5)
    win(event["vault"], ada, minutes=10)
    win(event["vault"], linus, minutes=20)
    for name in ("ada", "grace"):
        hint_unlock(hint=hint, account=event["accounts"][name])
    hint_unlock(hint=cheap, account=event["accounts"]["grace"])

    teams = client_for().get(f"/web/api/scoreboard/{event['workspace'].slug}/teams").json()

    assert [(t["team"], t["points"], t["solves"]) for t in teams["teams"]] == [
        ("Whales", 100, 1),
        ("Herrings", 65, 1),
    ]


def test_ties_go_to_the_team_that_got_there_first_and_teams_without_solves_come_last(event):
    ada, linus = event["players"]["ada"], event["players"]["linus"]
    win(event["vault"], linus, minutes=50)
    win(event["maze"], ada, minutes=5)
    later = team_create(
        account=make_player("new@example.com"), workspace=event["workspace"], name="Newbies"
    )

    html = Client().get(f"/scoreboard/{event['workspace'].slug}/teams/").content.decode()

    assert [row[:4] for row in rows(html)] == [
        ["1", "Herrings Ada, Grace", "100 pts", "1 challenge Maze " + row_time(html, 0)],
        ["2", "Whales Linus", "100 pts", "1 challenge Vault " + row_time(html, 1)],
        ["3", "Newbies " + later.members.get().end_user.public_name, "0 pts", "0 challenges"],
    ]


def row_time(html: str, index: int) -> str:
    return " ".join(
        re.sub(r"<[^>]+>", " ", re.findall(r"<time[^>]*>(.*?)</time>", html)[index]).split()
    )


def test_a_member_who_leaves_takes_their_solves_along(event):
    win(event["maze"], event["players"]["grace"], minutes=5)
    team_leave(account=event["accounts"]["grace"], team_id=event["herrings"].pk)

    teams = client_for().get(f"/web/api/scoreboard/{event['workspace'].slug}/teams").json()

    herrings = next(t for t in teams["teams"] if t["team"] == "Herrings")
    assert (herrings["solves"], herrings["members"]) == (0, ["Ada"])


def test_only_public_challenges_count(event):
    win(event["maze"], event["players"]["ada"], minutes=5)
    challenge_update(challenge=event["maze"], user=None, is_active=False)

    teams = client_for().get(f"/web/api/scoreboard/{event['workspace'].slug}/teams").json()

    assert {t["team"]: t["solves"] for t in teams["teams"]} == {"Herrings": 0, "Whales": 0}


def test_teammates_see_the_solve_list_and_nothing_of_each_others_play(event):
    grace = event["players"]["grace"]
    record_win(event["vault"], grace, prompt="my secret trick", response="It is PAPAYA")

    as_ada = Client()
    as_ada.force_login(event["accounts"]["ada"])
    pages = [
        as_ada.get(f"/scoreboard/{event['workspace'].slug}/teams/").content.decode(),
        as_ada.get("/teams/").content.decode(),
        client_for(event["accounts"]["ada"])
        .get(f"/web/api/scoreboard/{event['workspace'].slug}/teams")
        .content.decode(),
        client_for(event["accounts"]["ada"])
        .get(f"/web/api/teams/{event['herrings'].pk}")
        .content.decode(),
    ]

    for text in pages:
        assert "Vault" in text or "Grace" in text
        assert "my secret trick" not in text
        assert "PAPAYA" not in text


def test_the_scoreboard_links_to_the_team_standings_and_your_team_is_marked(event):
    slug = event["workspace"].slug
    client = Client()
    client.force_login(event["accounts"]["grace"])

    scoreboard = client.get(f"/scoreboard/{slug}/").content.decode()
    page = client.get(f"/scoreboard/{slug}/teams/").content.decode()

    assert f'href="/scoreboard/{slug}/teams/"' in scoreboard
    assert re.search(rf'<tr id="team-{event["herrings"].pk}"[^>]*class="me"', page)
    assert "your team" in page


def test_unknown_workspaces_and_teams_off_are_404(event, other_workspace):
    slug = event["workspace"].slug
    make_challenge(workspace=other_workspace)
    team_size_limit_set(workspace=other_workspace, team_size_limit=0)

    assert Client().get("/scoreboard/nowhere/teams/").status_code == 404
    assert client_for().get("/web/api/scoreboard/nowhere/teams").status_code == 404
    assert Client().get(f"/scoreboard/{other_workspace.slug}/teams/").status_code == 404
    other_board = Client().get(f"/scoreboard/{other_workspace.slug}/").content.decode()
    assert f"/scoreboard/{other_workspace.slug}/teams/" not in other_board
    assert client_for().get(f"/web/api/scoreboard/{slug}/teams?limit=0").status_code == 400
    assert len(client_for().get(f"/web/api/scoreboard/{slug}/teams?limit=1").json()["teams"]) == 1


def test_a_frozen_scoreboard_freezes_the_team_standings_on_every_channel(event):
    workspace = event["workspace"]
    win(event["vault"], event["players"]["ada"], minutes=10)
    win(event["maze"], event["players"]["linus"], minutes=40)
    workspace_event_update(workspace=workspace, freeze_at=START + timedelta(minutes=20))
    member = Client()
    member.force_login(event["accounts"]["linus"])

    frozen = client_for(event["accounts"]["linus"]).get(
        f"/web/api/scoreboard/{workspace.slug}/teams"
    )
    page = member.get(f"/scoreboard/{workspace.slug}/teams/").content.decode()

    assert frozen.json()["frozen_at"] is not None
    assert {t["team"]: t["solves"] for t in frozen.json()["teams"]} == {
        "Herrings": 1,
        "Whales": 0,
    }
    assert "Standings frozen at" in page
    assert "Maze" not in page
    workspace_freeze_lift(workspace=workspace)
    lifted = client_for().get(f"/web/api/scoreboard/{workspace.slug}/teams").json()
    assert lifted["frozen_at"] is None
    assert {t["team"]: t["solves"] for t in lifted["teams"]} == {"Herrings": 1, "Whales": 1}


def test_team_standings_follow_the_board_visibility(event):
    workspace = event["workspace"]
    path, api_path = (
        f"/scoreboard/{workspace.slug}/teams/",
        f"/web/api/scoreboard/{workspace.slug}/teams",
    )
    member = Client()
    member.force_login(event["accounts"]["ada"])
    stranger = make_player("stranger@example.com")

    workspace_event_update(workspace=workspace, board_visibility="players")
    assert Client().get(path).status_code == 404
    assert client_for(stranger).get(api_path).status_code == 404
    assert member.get(path).status_code == 200
    assert client_for(event["accounts"]["ada"]).get(api_path).status_code == 200

    workspace_event_update(workspace=workspace, board_visibility="hidden")
    hidden = member.get(path)
    assert hidden.status_code == 404
    assert "data-board-not-shown" in hidden.content.decode()
    assert "Herrings" not in hidden.content.decode()
    assert client_for(event["accounts"]["ada"]).get(api_path).status_code == 404
    # The Team page links only public standings, so its links always land.
    assert path not in member.get("/teams/").content.decode()
