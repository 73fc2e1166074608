"""What the creators' admin lists and titles tell them about play."""

import re

import pytest
from django.test import Client

from challenges.services.attempts import attempt_record
from challenges.services.challenges import challenge_create
from challenges.services.collections import collection_create, collection_set_challenges
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db

LIST = "/admin/challenges/challenge/"


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def play(challenge, end_user, *, won: bool):
    return attempt_record(
        challenge=challenge,
        end_user=end_user,
        verdict=Verdict(passed=won, feedback="", rating=None),
        prompt="p",
        response="r",
        tokens_total=10,
        elapsed_ms=100,
    )


def row_of(html: str, name: str) -> str:
    rows = re.findall(r"<tr[^>]*>.*?</tr>", html, re.S)
    return next(row for row in rows if f">{name}</a>" in row)


def cells(row: str) -> list[str]:
    return [
        re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>.*?</td>", row, re.S)
    ]


def test_it_shows_solves_players_solve_rate_and_last_attempt(creator, workspace):
    vault = make_challenge(workspace=workspace, name="Acme Vault")
    make_challenge(workspace=workspace, name="Untouched")
    alice, bob, carol, dave = (make_end_user(workspace=workspace) for _ in range(4))
    play(vault, alice, won=False)
    play(vault, alice, won=True)
    play(vault, bob, won=False)
    play(vault, carol, won=False)
    play(vault, dave, won=True)

    html = admin_client(creator).get(LIST).content.decode()

    header = re.findall(r'<th scope="col"[^>]*>.*?</th>', html, re.S)
    titles = [re.sub(r"<[^>]+>", "", th).strip() for th in header]
    assert [
        title for title in titles if title in ("Solves", "Players", "Solve rate", "Last attempt")
    ] == ["Solves", "Players", "Solve rate", "Last attempt"]
    vault_cells = cells(row_of(html, "Acme Vault"))
    assert "2" in vault_cells and "4" in vault_cells and "50%" in vault_cells
    assert "just now" in vault_cells
    untouched = cells(row_of(html, "Untouched"))
    assert "never" in untouched
    assert "—" in untouched


@pytest.mark.parametrize("challenge_count", [1, 20])
def test_it_reads_the_list_in_a_fixed_number_of_queries(
    creator, workspace, challenge_count, django_assert_max_num_queries
):
    for index in range(challenge_count):
        challenge = make_challenge(workspace=workspace, name=f"Level {index}")
        player = make_end_user(workspace=workspace)
        play(challenge, player, won=index % 2 == 0)
    client = admin_client(creator)
    client.get(LIST)  # session and content types warmed up

    with django_assert_max_num_queries(12):
        response = client.get(LIST)
    assert response.content.decode().count("Level ") >= challenge_count


def test_it_titles_an_attempt_by_player_challenge_and_time(creator, workspace):
    vault = make_challenge(workspace=workspace, name="Acme Vault")
    alice = make_end_user(workspace=workspace, external_id="alice-dify")
    attempt = play(vault, alice, won=True)

    html = (
        admin_client(creator)
        .get(f"/admin/challenges/challengeattempt/{attempt.pk}/change/")
        .content.decode()
    )

    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    assert "alice-dify on Acme Vault at " in html
    assert str(attempt.pk) not in title


def test_it_labels_collection_rows_by_challenge_name(creator, workspace):
    vault = make_challenge(workspace=workspace, name="Acme Vault")
    maze = make_challenge(workspace=workspace, name="Acme Maze")
    collection = collection_create(workspace=workspace, user=creator, name="Tour")
    collection_set_challenges(collection=collection, challenge_ids=[vault.pk, maze.pk])

    html = (
        admin_client(creator)
        .get(f"/admin/challenges/challengecollection/{collection.pk}/change/")
        .content.decode()
    )

    assert "Acme Vault" in html and "Acme Maze" in html
    assert str(vault.pk) + "</p>" not in html


def test_it_labels_the_admin_login_email(client):
    html = client.get("/admin/login/").content.decode()

    assert re.search(r"<label[^>]*>Email:?</label>", html)
    assert 'type="email"' in html
    assert "Username" not in html


def test_it_shows_who_created_a_challenge_without_a_forbidden_link(creator, workspace):
    client = admin_client(creator)
    vault = challenge_create(
        workspace=workspace, user=creator, name="Acme Vault", success_pattern="open sesame"
    )

    html = client.get(f"/admin/challenges/challenge/{vault.pk}/change/").content.decode()

    assert "owner@acme.test" in html
    assert "/admin/auth/user/" not in html
    for link in set(re.findall(r'href="(/admin/[^"#?]+)"', html)):
        assert client.get(link).status_code != 403, link


def test_it_links_a_challenge_to_its_page_on_the_site(creator, workspace):
    vault = make_challenge(workspace=workspace, name="Acme Vault", slug="acme-vault")

    client = admin_client(creator)
    html = client.get(f"/admin/challenges/challenge/{vault.pk}/change/").content.decode()

    assert "View on site" in html
    link = re.search(r'href="([^"]+)"[^>]*class="viewsitelink"', html).group(1)
    assert link == "/challenges/acme-vault/"
    assert client.get(link).status_code == 200
