"""Collection strategies, built from real attempts recorded through attempt_record."""

import pytest

from challenges.models import ChallengeCollection
from challenges.selectors.collections import leaderboard_for_collection
from challenges.services.attempts import attempt_record
from challenges.services.collections import collection_create, collection_set_challenges
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db


def _collection(workspace, strategy, challenges, **fields):
    collection = collection_create(
        workspace=workspace, user=None, name=f"{strategy} set", scoring_strategy=strategy, **fields
    )
    collection_set_challenges(collection=collection, challenge_ids=[c.id for c in challenges])
    return collection


def _solve(challenge, end_user, *, rating=None, elapsed_ms=None, tokens=None, passed=True):
    return attempt_record(
        challenge=challenge,
        end_user=end_user,
        verdict=Verdict(passed=passed, rating=rating),
        elapsed_ms=elapsed_ms,
        tokens_total=tokens,
    )


def _players(workspace, *names):
    return [make_end_user(workspace=workspace, external_id=name) for name in names]


def _board(api, collection, **params):
    response = api.get(f"/web/api/challenge-collections/{collection.id}/leaderboard", params)
    assert response.status_code == 200, response.json()
    return response.json()


def _standings(board) -> list[tuple]:
    return [(row["player"], row["solved"], row["value"]) for row in board["entries"]]


def test_it_ranks_sum_by_points_then_solved_then_earliest_finish(anon_api, workspace):
    first = make_challenge(workspace=workspace, scoring_strategy="first")
    rated = make_challenge(workspace=workspace, scoring_strategy="highest_rating")
    fastest = make_challenge(workspace=workspace, scoring_strategy="fastest")
    outside = make_challenge(workspace=workspace)
    collection = _collection(workspace, "sum", [first, rated, fastest])
    alice, bob, carol, dave, erin, frank = _players(
        workspace, "alice", "bob", "carol", "dave", "erin", "frank"
    )

    _solve(first, alice)
    _solve(rated, alice, rating=2)
    _solve(rated, alice, rating=5)  # her best rating is the one that counts
    _solve(rated, alice, rating=4)
    _solve(first, bob)
    _solve(rated, bob, rating=3)
    _solve(fastest, bob, elapsed_ms=900)  # milliseconds are not points
    _solve(rated, carol, rating=6)
    _solve(first, dave)
    _solve(fastest, dave, elapsed_ms=10)
    _solve(first, erin)
    _solve(fastest, erin, elapsed_ms=5)
    _solve(outside, erin)
    _solve(first, frank, passed=False)

    board = _board(anon_api, collection)
    assert board["scoring_strategy"] == "sum"
    assert board["metric"] == "points"
    assert board["challenge_count"] == 3
    assert _standings(board) == [
        ("bob", 3, 303.0),  # 100 + (100 + 3) + 100: the scoreboard's 100 a solve
        ("alice", 2, 205.0),  # 100 + (100 + 5)
        ("dave", 2, 200.0),
        ("erin", 2, 200.0),  # same as dave, finished later
        ("carol", 1, 106.0),
    ]
    assert [row["rank"] for row in board["entries"]] == [1, 2, 3, 4, 5]


def test_it_ranks_fastest_total_by_solved_then_lowest_total(anon_api, workspace):
    one = make_challenge(workspace=workspace, scoring_strategy="fastest")
    two = make_challenge(workspace=workspace, scoring_strategy="fastest")
    collection = _collection(workspace, "fastest_total", [one, two])
    alice, bob, carol, dave, erin = _players(workspace, "alice", "bob", "carol", "dave", "erin")

    _solve(one, alice, elapsed_ms=100)
    _solve(two, alice, elapsed_ms=200)
    _solve(one, bob, elapsed_ms=900)
    _solve(one, bob, elapsed_ms=50)  # best run replaces the slow one
    _solve(two, bob, elapsed_ms=400)
    _solve(one, carol, elapsed_ms=10)
    _solve(one, dave, elapsed_ms=150)
    _solve(two, dave, elapsed_ms=150)
    _solve(one, erin, elapsed_ms=1)
    _solve(two, erin)  # solved, but no time was measured

    board = _board(anon_api, collection)
    assert board["metric"] == "total_elapsed_ms"
    assert _standings(board) == [
        ("alice", 2, 300.0),
        ("dave", 2, 300.0),  # same total, finished later
        ("bob", 2, 450.0),
        ("erin", 2, 1.0),  # an unmeasured solve never beats measured ones
        ("carol", 1, 10.0),  # fewer solved ranks below any total
    ]


def test_it_ranks_fewest_tokens_total_by_solved_then_lowest_total(anon_api, workspace):
    one = make_challenge(workspace=workspace, scoring_strategy="fewest_tokens")
    two = make_challenge(workspace=workspace, scoring_strategy="first")
    collection = _collection(workspace, "fewest_tokens_total", [one, two])
    alice, bob, carol, dave = _players(workspace, "alice", "bob", "carol", "dave")

    _solve(one, bob, tokens=10)
    _solve(two, bob, tokens=100)
    _solve(one, alice, tokens=30)
    _solve(two, alice, tokens=40)
    _solve(one, carol, tokens=5)
    _solve(one, dave, tokens=60)
    _solve(two, dave, tokens=10)

    board = _board(anon_api, collection)
    assert board["metric"] == "total_tokens"
    assert _standings(board) == [
        ("alice", 2, 70.0),
        ("dave", 2, 70.0),  # same total, finished later
        ("bob", 2, 110.0),
        ("carol", 1, 5.0),
    ]


def test_it_ranks_highest_avg_rating_by_average_then_solved_then_earliest(anon_api, workspace):
    one = make_challenge(workspace=workspace, scoring_strategy="highest_rating")
    two = make_challenge(workspace=workspace, scoring_strategy="highest_rating")
    collection = _collection(workspace, "highest_avg_rating", [one, two])
    alice, bob, carol, dave, erin = _players(workspace, "alice", "bob", "carol", "dave", "erin")

    _solve(one, alice, rating=8)
    _solve(two, alice, rating=6)
    _solve(one, bob, rating=9)
    _solve(one, carol, rating=7)
    _solve(two, carol, rating=7)
    _solve(one, dave, rating=7)
    _solve(one, erin)  # solved without a rating

    board = _board(anon_api, collection)
    assert board["metric"] == "average_rating"
    assert _standings(board) == [
        ("bob", 1, 9.0),
        ("alice", 2, 7.0),
        ("carol", 2, 7.0),  # same average and solved, finished later
        ("dave", 1, 7.0),  # same average, fewer solved
        ("erin", 1, None),
    ]


def test_it_refuses_custom_collection_scoring_instead_of_faking_it(anon_api, workspace):
    challenge = make_challenge(workspace=workspace)
    collection = _collection(workspace, "sum", [challenge])
    # A row saved before `custom` was refused at save.
    ChallengeCollection.objects.filter(pk=collection.pk).update(
        scoring_strategy="custom", scoring_entrypoint="pkg:Scorer"
    )
    _solve(challenge, make_end_user(workspace=workspace))

    response = anon_api.get(f"/web/api/challenge-collections/{collection.id}/leaderboard")
    assert response.status_code == 422
    assert response.json()["error"] == {
        "code": "unsupported_scoring",
        "message": "custom collection scoring is not available",
        "fields": {},
    }


def test_it_counts_only_challenges_still_in_the_collection(anon_api, workspace):
    kept = make_challenge(workspace=workspace)
    dropped = make_challenge(workspace=workspace)
    collection = _collection(workspace, "sum", [kept, dropped])
    (alice,) = _players(workspace, "alice")
    _solve(kept, alice)
    _solve(dropped, alice)
    assert _standings(_board(anon_api, collection)) == [("alice", 2, 200.0)]

    collection_set_challenges(collection=collection, challenge_ids=[kept.id])
    assert _standings(_board(anon_api, collection)) == [("alice", 1, 100.0)]


def test_it_honours_the_limit_and_refuses_bad_ones(anon_api, workspace):
    challenge = make_challenge(workspace=workspace)
    collection = _collection(workspace, "sum", [challenge])
    for player in _players(workspace, *(f"p{n}" for n in range(12))):
        _solve(challenge, player)

    assert len(_board(anon_api, collection)["entries"]) == 10
    board = _board(anon_api, collection, limit=3)
    assert board["limit"] == 3
    assert [row["player"] for row in board["entries"]] == ["p0", "p1", "p2"]
    assert len(_board(anon_api, collection, limit=100)["entries"]) == 12

    url = f"/web/api/challenge-collections/{collection.id}/leaderboard"
    for bad in ("0", "101", "ten", "-1", "2.5"):
        response = anon_api.get(url, {"limit": bad})
        assert response.status_code == 400, bad
        error = response.json()["error"]
        assert error["code"] == "invalid"
        assert error["message"] == "'limit' must be a whole number from 1 to 100."
        assert list(error["fields"]) == ["limit"]


@pytest.mark.parametrize("strategy", ["sum", "fastest_total", "highest_avg_rating"])
def test_it_reads_the_board_in_the_same_few_queries_for_any_number_of_players(
    workspace, django_assert_num_queries, strategy
):
    challenges = [make_challenge(workspace=workspace, scoring_strategy="fastest") for _ in "abc"]
    collection = _collection(workspace, strategy, challenges)
    players = _players(workspace, *(f"player-{n}" for n in range(30)))

    for player in players[:3]:
        for challenge in challenges:
            _solve(challenge, player, elapsed_ms=100, rating=5)
    with django_assert_num_queries(2):
        small = leaderboard_for_collection(collection=collection, limit=100)

    for player in players[3:]:
        for challenge in challenges:
            _solve(challenge, player, elapsed_ms=100, rating=5)
            _solve(challenge, player, elapsed_ms=90, rating=6)
    with django_assert_num_queries(2):
        large = leaderboard_for_collection(collection=collection, limit=100)

    assert len(small.entries) == 3
    assert len(large.entries) == 30
