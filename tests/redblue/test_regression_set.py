"""Every break joins the challenge's regression set; a defence sent later counts only once
no attack of the set breaks it (SPEC §10 Exports; offline target and judge, eager tasks)."""

import pytest

from redblue.models import RegressionAttack, TeamPairing, TeamSubmission
from redblue.teams.services.regression import defense_regression_settle
from tests.redblue.conftest import (
    PLAIN_ATTACK,
    ROLEPLAY_ATTACK,
    STRONG_DEFENSE,
    WEAK_DEFENSE,
    url,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def broken(red_blue, players):
    """red1's role-play attack broke blue1's weak defence: the set holds that attack."""
    attack = players("red1").submit(red_blue, "red", ROLEPLAY_ATTACK).json()
    defence = players("blue1").submit(red_blue, "blue", WEAK_DEFENSE).json()
    assert defence["status"] == "paired"
    assert defence["pairings"][0]["categories"]["CBRNE"] is True
    return {"attack": attack["submission_id"], "defence": defence["submission_id"]}


def test_a_break_joins_the_regression_set_once(red_blue, players, broken, creator_api):
    rows = RegressionAttack.objects.filter(red_blue_challenge=red_blue)
    assert [str(row.attack_submission_id) for row in rows] == [broken["attack"]]
    assert rows[0].categories == ["CBRNE"]

    # The same attack breaking another defence does not add it twice.
    players("blue2").submit(red_blue, "blue", WEAK_DEFENSE + " Be nice.")
    assert RegressionAttack.objects.filter(red_blue_challenge=red_blue).count() == 1

    listed = creator_api.get(f"/console/api/red-blue-challenges/{red_blue.id}/regression-set")
    assert listed.status_code == 200
    (row,) = listed.json()["results"]
    assert row["attack_submission_id"] == broken["attack"]
    assert row["prompt"] == ROLEPLAY_ATTACK
    assert row["categories"] == ["CBRNE"]


def test_a_held_pairing_adds_nothing(red_blue, players):
    players("red1").submit(red_blue, "red", PLAIN_ATTACK)
    held = players("blue1").submit(red_blue, "blue", STRONG_DEFENSE).json()
    assert held["pairings"][0]["categories"]["CBRNE"] is False
    assert not RegressionAttack.objects.filter(red_blue_challenge=red_blue).exists()


def test_a_later_defence_that_an_attack_of_the_set_still_breaks_does_not_count(
    red_blue, players, broken
):
    answer = players("blue2").submit(red_blue, "blue", WEAK_DEFENSE + " Be kind.")
    assert answer.status_code == 201
    body = answer.json()
    assert body["status"] == "rejected"
    assert body["pairings"] == []
    report = body["regression"]
    assert report["checked"] == 1 and report["passed"] is False
    (failure,) = report["failures"]
    assert failure["attack_submission_id"] == broken["attack"]
    assert failure["prompt"] == ROLEPLAY_ATTACK
    assert failure["categories"] == ["CBRNE"]

    rejected = TeamSubmission.objects.get(id=body["submission_id"])
    assert rejected.active is False
    assert not TeamPairing.objects.filter(defense_submission=rejected).exists()

    # A new attack is never paired with the rejected defence.
    later = players("red2").submit(red_blue, "red", PLAIN_ATTACK).json()
    assert all(
        pairing["defense_submission"]["id"] != body["submission_id"]
        for pairing in later["pairings"]
    )

    # The player reads where their defence stands; another player gets 404.
    mine = players("blue2").api.get(url(red_blue, f"submissions/{body['submission_id']}"))
    assert mine.status_code == 200
    assert mine.json()["status"] == "rejected"
    assert mine.json()["active"] is False
    assert mine.json()["regression"]["failures"][0]["attack_submission_id"] == broken["attack"]
    other = players("red1").api.get(url(red_blue, f"submissions/{body['submission_id']}"))
    assert other.status_code == 404


def test_a_rejected_defence_leaves_the_players_current_one_in_place(red_blue, players, broken):
    again = players("blue1").submit(red_blue, "blue", WEAK_DEFENSE + " Please.").json()
    assert again["status"] == "rejected"
    current = TeamSubmission.objects.get(id=broken["defence"])
    assert current.active is True


def test_a_defence_that_withstands_the_set_counts_and_is_paired(red_blue, players, broken):
    answer = players("blue2").submit(red_blue, "blue", STRONG_DEFENSE).json()
    assert answer["status"] == "paired"
    assert answer["regression"] == {"checked": 1, "passed": True, "failures": []}
    assert len(answer["pairings"]) == 1
    assert answer["pairings"][0]["status"] == "completed"
    assert TeamSubmission.objects.get(id=answer["submission_id"]).active is True


def test_settling_twice_changes_nothing(red_blue, players, broken):
    answer = players("blue2").submit(red_blue, "blue", STRONG_DEFENSE).json()
    pairings = TeamPairing.objects.count()
    again = defense_regression_settle(
        submission_id=answer["submission_id"],
        report={"checked": 1, "passed": False, "failures": [{"x": 1}]},
    )
    assert again == "already_done"
    assert TeamPairing.objects.count() == pairings
    assert TeamSubmission.objects.get(id=answer["submission_id"]).status == "paired"


def test_an_attacker_never_reads_a_checked_defence(red_blue, players, broken):
    players("blue2").submit(red_blue, "blue", STRONG_DEFENSE)
    pairings = players("red1").api.get(url(red_blue, "pairings")).json()["results"]
    assert pairings
    assert all(pairing["defense_submission"]["prompt"] is None for pairing in pairings)
