"""/challenges/<slug>/leaderboard, the board section the page polls: an ETag of the very
bytes a viewer gets (their own row and rank included), 304 while those stay the same, and
kept by that viewer's browser only."""

import pytest
from django.test import Client
from django.urls import reverse

from players.services import end_user_for_account
from tests.factories import make_challenge, make_end_user, record_win

pytestmark = pytest.mark.django_db


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, slug="the-vault", scoring_strategy="fastest")


def win(challenge, end_user, elapsed_ms: int) -> None:
    record_win(challenge, end_user, elapsed_ms=elapsed_ms)


def partial(client: Client, challenge, etag: str | None = None):
    url = reverse("challenge-leaderboard-partial", args=[challenge.slug])
    return client.get(url, HTTP_IF_NONE_MATCH=etag) if etag else client.get(url)


def test_it_answers_304_while_the_section_is_unchanged(client, challenge):
    win(challenge, make_end_user(workspace=challenge.workspace, external_id="ada"), 300)
    first = partial(client, challenge)
    assert first.status_code == 200
    assert "private" in first["Cache-Control"] and "no-cache" in first["Cache-Control"]

    again = partial(client, challenge, first["ETag"])
    assert again.status_code == 304
    assert again.content == b""

    win(challenge, make_end_user(workspace=challenge.workspace, external_id="bob"), 100)
    changed = partial(client, challenge, first["ETag"])
    assert changed.status_code == 200
    assert changed["ETag"] != first["ETag"]
    assert "bob" in changed.content.decode()


def test_a_player_gets_their_own_section_and_etag(client, challenge, player):
    win(challenge, make_end_user(workspace=challenge.workspace, external_id="ada"), 100)
    win(challenge, end_user_for_account(workspace=challenge.workspace, account=player), 300)
    anonymous = partial(client, challenge)

    own = Client()
    own.force_login(player)
    mine = partial(own, challenge)
    html = mine.content.decode()
    assert "Your rank: <strong>#2</strong>" in html and "(you)" in html
    assert "(you)" not in anonymous.content.decode()
    assert mine["ETag"] != anonymous["ETag"]
    assert partial(own, challenge, anonymous["ETag"]).status_code == 200
    assert partial(own, challenge, mine["ETag"]).status_code == 304
