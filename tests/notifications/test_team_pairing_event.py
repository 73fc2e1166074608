import pytest

from notifications.models import Event
from redblue.models import TeamPairing
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE, players, red_blue  # noqa: F401


@pytest.mark.django_db(transaction=True)
def test_a_judged_pairing_emits_one_team_pairing_completed_with_the_seed_shape(
    red_blue,  # noqa: F811
    players,  # noqa: F811
):
    players("blue").submit(red_blue, "blue", WEAK_DEFENSE)
    players("red").submit(red_blue, "red", ROLEPLAY_ATTACK)

    pairing = TeamPairing.objects.get(status="completed")
    event = Event.objects.get(type="team_pairing_completed")
    assert event.workspace_id == red_blue.workspace_id
    assert event.payload == {
        "event": "team_pairing_completed",
        "red_blue_challenge_id": str(red_blue.id),
        "pairing_id": str(pairing.id),
        "attack_submission_id": str(pairing.attack_submission_id),
        "defense_submission_id": str(pairing.defense_submission_id),
        "categories": pairing.categories,
        "judge_rating": pairing.judge_rating,
        "red_points": float(pairing.red_points),
        "blue_points": float(pairing.blue_points),
        "occurred_at": int(pairing.completed_at.timestamp() * 1000),
    }
