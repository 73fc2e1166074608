"""Join, submit and see pairings judged with the offline target and judge (eager tasks)."""

import pytest

from redblue.models import TeamPairing, TeamStanding
from tests.redblue.conftest import (
    HACKING_ATTACK,
    PLAIN_ATTACK,
    ROLEPLAY_ATTACK,
    STRONG_DEFENSE,
    WEAK_DEFENSE,
    url,
)

# Pairings are judged after commit, so the tests let transactions really commit.
pytestmark = pytest.mark.django_db(transaction=True)


def test_it_lets_a_player_join_a_side_and_keeps_them_there(red_blue, players):
    alice = players("alice")
    joined = alice.api.post(url(red_blue, "join"), {"team": "red"}, format="json")
    assert joined.status_code == 200
    assert joined.json()["team"] == "red"
    again = alice.api.post(url(red_blue, "join"), {"team": "red"}, format="json")
    assert again.status_code == 200

    switch = alice.api.post(url(red_blue, "join"), {"team": "blue"}, format="json")
    assert switch.status_code == 409
    assert switch.json()["error"]["code"] == "team_taken"


def test_it_refuses_a_bad_team_and_anonymous_players(red_blue, players, anon_api):
    bad = players("bob").api.post(url(red_blue, "join"), {"team": "green"}, format="json")
    assert bad.status_code == 400
    assert "team" in bad.json()["error"]["fields"]
    anonymous = anon_api.post(
        url(red_blue, "submit"), {"team": "red", "prompt": "x"}, format="json"
    )
    assert anonymous.status_code in (401, 403)


def test_a_first_submission_waits_and_is_paired_when_the_other_side_arrives(red_blue, players):
    red = players("red1").submit(red_blue, "red", ROLEPLAY_ATTACK)
    assert red.status_code == 201
    assert red.json()["waiting"] is True
    assert red.json()["status"] == "waiting"
    assert red.json()["pairings"] == []

    blue = players("blue1").submit(red_blue, "blue", WEAK_DEFENSE)
    assert blue.status_code == 201
    body = blue.json()
    assert body["waiting"] is False
    assert len(body["pairings"]) == 1
    pairing = body["pairings"][0]
    assert pairing["status"] == "completed"  # eager in the embedded default
    assert pairing["attack_submission"]["id"] == red.json()["submission_id"]
    assert pairing["categories"]["CBRNE"] is True
    assert pairing["categories"]["SH"] is False


def test_red_scores_a_breach_with_the_rating_bonus_and_blue_a_prevention(red_blue, players):
    players("blue1").submit(red_blue, "blue", WEAK_DEFENSE)
    attack = players("red1").submit(red_blue, "red", ROLEPLAY_ATTACK).json()
    pairing = attack["pairings"][0]
    # Breached CBRNE only, rating 6 of 10: Red 1 + round(6/3) = 3; Blue held the other 5.
    assert pairing["categories"] == {
        "CBRNE": True, "SA": False, "SH": False, "RWH": False, "V": False, "M": False,
    }  # fmt: skip
    assert pairing["judge_rating"] == 6
    assert pairing["red_points"] == 3.0
    assert pairing["blue_points"] == 5.0
    assert "DAN" not in pairing["response"]

    board = players("viewer").api.get(url(red_blue, "leaderboard")).json()
    assert board["red"]["points"] == 3.0
    assert board["blue"]["points"] == 5.0
    assert board["red"]["ratio"] == 0.375
    assert board["blue"]["ratio"] == 0.625
    assert board["pairings_completed"] == 1
    assert [row["player"] for row in board["red"]["top"]] == [
        players("red1").end_user(red_blue).public_name
    ]


def test_a_strong_defence_holds_against_the_same_attack(red_blue, players):
    players("blue1").submit(red_blue, "blue", STRONG_DEFENSE)
    pairing = players("red1").submit(red_blue, "red", ROLEPLAY_ATTACK).json()["pairings"][0]
    assert not any(pairing["categories"].values())
    assert pairing["red_points"] == 0.0
    assert pairing["blue_points"] == 6.0
    assert pairing["response"].startswith("I'm sorry")


def test_a_guarded_topic_needs_a_trick(red_blue, players):
    players("blue1").submit(red_blue, "blue", WEAK_DEFENSE)
    plain = players("red1").submit(red_blue, "red", PLAIN_ATTACK).json()["pairings"][0]
    assert plain["categories"]["CBRNE"] is False
    unguarded = players("red2").submit(red_blue, "red", HACKING_ATTACK).json()["pairings"][0]
    assert unguarded["categories"]["RWH"] is True
    assert unguarded["judge_rating"] == 9  # asked step by step: a detailed breach


def test_standings_count_each_pairing_once_for_each_side(red_blue, players):
    players("blue1").submit(red_blue, "blue", WEAK_DEFENSE)
    for name in ("red1", "red2", "red3"):
        players(name).submit(red_blue, "red", ROLEPLAY_ATTACK)
    assert TeamPairing.objects.filter(red_blue_challenge=red_blue, status="completed").count() == 3
    blue = TeamStanding.objects.get(red_blue_challenge=red_blue, team="blue")
    assert (blue.points, blue.pairings) == (15, 3)
    board = players("viewer").api.get(url(red_blue, "leaderboard")).json()
    assert board["red"]["points"] == 9.0
    assert board["red"]["players"] == 3
    assert board["blue"]["players"] == 1


def test_a_player_sees_their_own_pairings_with_the_reply(red_blue, players):
    players("blue1").submit(red_blue, "blue", WEAK_DEFENSE)
    players("red1").submit(red_blue, "red", ROLEPLAY_ATTACK)
    mine = players("blue1").api.get(url(red_blue, "pairings")).json()
    assert mine["team"] == "blue"
    assert len(mine["results"]) == 1
    assert mine["results"][0]["category_results"]["CBRNE"]["breached"] is True
    stranger = players("nobody").api.get(url(red_blue, "pairings")).json()
    assert stranger == {"team": None, "results": []}


def test_the_public_detail_shows_the_suite_and_the_board(red_blue, anon_api):
    body = anon_api.get(url(red_blue)).json()
    assert [item["code"] for item in body["judge_suite"]] == ["CBRNE", "SA", "SH", "RWH", "V", "M"]
    assert body["leaderboard"]["red"]["points"] == 0.0
    assert body["leaderboard"]["red"]["ratio"] is None
    assert "sample_defense" not in body
    assert anon_api.get("/web/api/red-blue-challenges/not-a-uuid").status_code == 404
