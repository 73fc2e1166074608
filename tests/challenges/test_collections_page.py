import re

import pytest
from django.test import Client

from challenges.models import ChallengeCollection
from challenges.services.attempts import attempt_record
from challenges.services.collections import collection_create, collection_set_challenges
from judging.verdicts import Verdict
from players.services import end_user_for_account
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db


def _collection(workspace, challenges, **fields):
    fields.setdefault("name", "Gauntlet")
    collection = collection_create(workspace=workspace, user=None, **fields)
    collection_set_challenges(collection=collection, challenge_ids=[c.id for c in challenges])
    return collection


def _solve(challenge, end_user):
    return attempt_record(challenge=challenge, end_user=end_user, verdict=Verdict(passed=True))


def _item(html: str, slug: str) -> str:
    match = re.search(rf'<li class="[^"]*" data-challenge="{slug}".*?</li>', html, re.S)
    assert match, f"no item for {slug}"
    return match.group(0)


def test_it_shows_instructions_challenges_in_order_and_the_leaderboard(workspace):
    one = make_challenge(workspace=workspace, name="Warm-up")
    two = make_challenge(workspace=workspace, name="Boss fight")
    hidden = make_challenge(workspace=workspace, name="Retired one", is_active=False)
    collection = _collection(
        workspace,
        [two, hidden, one],
        instructions_md="Solve **every** one.\n\n<script>alert(1)</script>",
        theme={"accent": "#112233", "radius": 8},
    )
    _solve(one, make_end_user(workspace=workspace, external_id="speedy"))

    response = Client().get(f"/collections/{collection.slug}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<strong>every</strong>" in html
    assert "<script>alert(1)</script>" not in html
    assert ".challenge-theme { --accent: #112233; --radius: 8px; }" in html
    assert html.index("Boss fight") < html.index("Warm-up")
    assert f'href="/challenges/{two.slug}/"' in html
    assert "Retired one" not in html
    assert "speedy" in html
    assert "to track your progress" in html
    assert 'data-state="' not in html


def test_it_shows_a_logged_in_player_their_progress(workspace, player):
    one = make_challenge(workspace=workspace, name="Warm-up")
    two = make_challenge(workspace=workspace, name="Boss fight")
    collection = _collection(workspace, [one, two])
    _solve(one, end_user_for_account(workspace=workspace, account=player))
    _solve(two, make_end_user(workspace=workspace, external_id="someone-else"))

    client = Client()
    client.force_login(player)
    html = client.get(f"/collections/{collection.slug}/").content.decode()
    assert "You have solved 1 of 2." in html
    assert 'data-state="solved"' in _item(html, one.slug)
    assert "✓ Solved" in _item(html, one.slug)
    assert 'data-state="unsolved"' in _item(html, two.slug)
    assert "Not solved yet" in _item(html, two.slug)
    assert re.search(r'class="board-row me">.*?player-\d+ <em>\(you\)</em>', html, re.S)
    assert "someone-else" in html


def test_it_reads_the_page_in_the_same_number_of_queries_for_any_number_of_players(
    workspace, player, django_assert_max_num_queries
):
    challenges = [make_challenge(workspace=workspace) for _ in range(4)]
    collection = _collection(workspace, challenges)
    _solve(challenges[0], end_user_for_account(workspace=workspace, account=player))
    for n in range(25):
        end_user = make_end_user(workspace=workspace)
        for challenge in challenges[: n % 4 + 1]:
            _solve(challenge, end_user)

    client = Client()
    client.force_login(player)
    # Session and user, the header's display name, the collection, its items, the
    # player's solves, the challenges waiting for prerequisites, the board (2), the
    # workspace's brackets (the board's filter).
    with django_assert_max_num_queries(10):
        response = client.get(f"/collections/{collection.slug}/")
    assert response.status_code == 200


def test_it_explains_when_the_collection_board_cannot_be_computed(workspace):
    collection = _collection(workspace, [make_challenge(workspace=workspace)])
    # A row saved before `custom` was refused at save.
    ChallengeCollection.objects.filter(pk=collection.pk).update(
        scoring_strategy="custom", scoring_plugin_id="acme-scorer"
    )
    response = Client().get(f"/collections/{collection.slug}/")
    assert response.status_code == 200
    assert "custom collection scoring is not available" in response.content.decode()


def test_it_answers_404_for_private_and_unknown_collections(workspace):
    private = _collection(workspace, [], name="Secret set", is_public=False)
    assert Client().get(f"/collections/{private.slug}/").status_code == 404
    assert Client().get("/collections/no-such-thing/").status_code == 404
