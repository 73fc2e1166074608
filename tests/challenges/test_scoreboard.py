"""/scoreboard/ and /players/<id>/: standings, the server-drawn graph, the player's solves."""

import re

import pytest
from django.test import Client

from challenges.services.attempts import attempt_record
from challenges.services.challenges import challenge_update
from judging.verdicts import Verdict
from players.services import profile_create
from tests.factories import make_challenge, make_end_user, make_player, make_workspace

pytestmark = pytest.mark.django_db


def solve(challenge, end_user):
    return attempt_record(
        challenge=challenge,
        end_user=end_user,
        verdict=Verdict(passed=True, feedback="", rating=None),
        prompt="p",
        response="r",
        tokens_total=79,
        elapsed_ms=3200,
    )


@pytest.fixture
def arena(workspace):
    vault = make_challenge(workspace=workspace, name="Acme Vault", slug="acme-vault")
    maze = make_challenge(workspace=workspace, name="Acme Maze", slug="acme-maze")
    alice = make_end_user(workspace=workspace, external_id="alice-dify")
    bob = make_end_user(workspace=workspace, external_id="bob-dify")
    solve(vault, alice)
    solve(maze, alice)
    solve(vault, bob)
    return {"vault": vault, "maze": maze, "alice": alice, "bob": bob}


def standings(html: str) -> list[list[str]]:
    body = re.search(r"<tbody>(.*?)</tbody>", html, re.S).group(1)
    return [
        [
            re.sub(r"<[^>]+>", "", cell).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def test_it_ranks_players_by_the_points_they_hold(client, arena):
    html = client.get("/scoreboard/").content.decode()

    rows = standings(html)
    assert [row[:4] for row in rows] == [
        ["1", "alice-dify", "200 pts", "2 challenges"],
        ["2", "bob-dify", "100 pts", "1 challenge"],
    ]


def test_it_draws_the_leaders_graph_as_svg_on_the_server(client, arena):
    html = client.get("/scoreboard/").content.decode()

    svg = re.search(r"<svg class=\"score-graph\".*?</svg>", html, re.S).group(0)
    lines = re.findall(
        r'<polyline class="series series-\d" points="([^"]+)" data-player="([^"]+)"', svg
    )
    assert [player for _, player in lines] == ["alice-dify", "bob-dify"]
    alice_points = lines[0][0].split()
    assert len(alice_points) == 6  # start, two steps up, now
    assert "cdn" not in html.lower()


def test_it_counts_only_public_challenges(client, arena):
    challenge_update(challenge=arena["maze"], user=None, is_active=False)

    rows = standings(client.get("/scoreboard/").content.decode())

    assert [row[2] for row in rows] == ["100 pts", "100 pts"]


def test_it_keeps_workspaces_apart(client, arena):
    rival = make_workspace("Rival Labs")
    make_challenge(workspace=rival, name="Rival Fort", slug="rival-fort")
    html = client.get("/scoreboard/rival-labs/").content.decode()

    assert "alice-dify" not in html
    assert "Nobody has solved a challenge yet" in html
    assert client.get("/scoreboard/no-such-workspace/").status_code == 404


def test_it_reads_the_scoreboard_in_a_fixed_number_of_queries(
    client, workspace, django_assert_max_num_queries
):
    challenges = [make_challenge(workspace=workspace) for _ in range(5)]
    for index in range(30):
        player = make_end_user(workspace=workspace)
        for challenge in challenges[: index % 5 + 1]:
            solve(challenge, player)

    # Workspaces, standings, the leaders' solve times, the challenge ids for live updates,
    # the workspace's brackets (the filter).
    with django_assert_max_num_queries(5):
        response = client.get("/scoreboard/")
    assert response.status_code == 200
    assert len(standings(response.content.decode())) == 30


def test_it_shows_a_players_solves_with_units(client, arena):
    html = client.get(f"/players/{arena['alice'].pk}/").content.decode()

    assert "alice-dify" in html
    assert "200 pts" in html
    assert "Acme Vault" in html and "Acme Maze" in html
    assert "79 tokens" in html
    assert "3.2 s" in html


def test_it_answers_404_for_an_unknown_player(client):
    assert client.get("/players/not-a-uuid/").status_code == 404
    assert client.get("/players/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_it_links_the_scoreboard_from_the_header_and_greets_by_display_name(workspace):
    account = make_player("neo@example.com")
    profile_create(account=account, display_name="Neo")
    client = Client()
    client.force_login(account)

    html = client.get("/").content.decode()

    header = re.search(r"<header.*?</header>", html, re.S).group(0)
    assert 'href="/scoreboard/"' in header
    assert ">Neo</a>" in header
    assert "neo@example.com</a>" not in header


def test_it_answers_favicon_ico(client):
    from django.contrib.staticfiles import finders

    response = client.get("/favicon.ico")

    assert response.status_code == 301
    assert response["Location"] == "/static/favicon.ico"
    assert finders.find("favicon.ico")  # served by the static files (the browser test too)
    assert 'rel="icon"' in client.get("/").content.decode()


def test_it_puts_units_and_player_words_on_the_challenge_page(client, arena):
    html = client.get("/challenges/acme-vault/").content.decode()

    assert "First to solve wins" in html
    assert "Ranking: First" not in html
    assert "Checked by a rule" in html
    assert "60 attempts an hour" in html


def test_it_greets_a_new_player_by_display_name_in_the_confirmation_mail(client, mailoutbox):
    client.post(
        "/accounts/signup/",
        {
            "email": "morpheus@example.com",
            "name": "Morpheus",
            "password1": "a-long-passphrase-42",
            "password2": "a-long-passphrase-42",
        },
    )

    body = mailoutbox[-1].body
    assert body.startswith("Hello Morpheus,")
    assert '"Morpheus"' in body
    assert "user morpheus" not in body.lower()
