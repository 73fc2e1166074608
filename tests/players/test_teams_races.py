"""Joins at the same moment, on PostgreSQL with real threads: the database decides who
gets the last seat, and a player ends up in one team whatever they click at once."""

import threading

import pytest
from django.db import connection

from players.models import Team, TeamMember
from players.teams.services import team_create, team_size_limit_set
from tests.conftest import client_for, require_service
from tests.factories import make_challenge, make_player, make_workspace

pytestmark = pytest.mark.django_db(transaction=True)


def together(calls) -> list[tuple[int, str]]:
    """Run each (client, invite code) join at once; (status, error code) per call."""
    start = threading.Barrier(len(calls))
    answers: list[tuple[int, str]] = []

    def call(client, code) -> None:
        try:
            start.wait()
            response = client.post("/web/api/teams/join", {"invite_code": code}, format="json")
            error = response.json().get("error", {}).get("code", "") if response.content else ""
            answers.append((response.status_code, error))
        finally:
            connection.close()

    threads = [threading.Thread(target=call, args=pair) for pair in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.fixture
def workspace_with_teams():
    require_service(
        "PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL=postgres://…"
    )
    workspace = make_workspace("Race Co")
    make_challenge(workspace=workspace)
    return workspace


def test_eight_players_race_for_the_last_seat_and_one_gets_it(workspace_with_teams):
    team_size_limit_set(workspace=workspace_with_teams, team_size_limit=3)
    team = team_create(account=make_player(), workspace=workspace_with_teams, name="Racers")
    client_for(make_player()).post(
        "/web/api/teams/join", {"invite_code": team.invite_code}, format="json"
    )
    racers = [client_for(make_player()) for _ in range(8)]

    answers = together([(client, team.invite_code) for client in racers])

    assert sorted(answers) == [(200, "")] + [(409, "team_full")] * 7
    assert TeamMember.objects.filter(team=team).count() == 3


def test_a_player_joining_two_teams_at_once_ends_up_in_one(workspace_with_teams):
    # Room for every joiner in either team: only the second team may refuse, and only
    # because the player is already in the first.
    team_size_limit_set(workspace=workspace_with_teams, team_size_limit=10)
    teams = [
        team_create(account=make_player(), workspace=workspace_with_teams, name=name)
        for name in ("North", "South")
    ]
    for _ in range(4):
        player = make_player()
        client = client_for(player)

        answers = together([(client, team.invite_code) for team in teams])

        assert sorted(answers) == [(200, ""), (409, "already_in_team")]
        assert TeamMember.objects.filter(end_user__account=player).count() == 1
    assert sorted(Team.objects.values_list("members__is_captain", flat=True)).count(True) == 2
