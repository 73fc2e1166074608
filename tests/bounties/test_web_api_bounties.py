"""What the web API tells a player (or a client) about a challenge's bounties and waves:
the same as its page — what each bounty pays, whether it is claimed or how many places are
left, and each wave's schedule — read once for a whole list."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from challenges.services.bounties import bounty_create
from challenges.services.waves import wave_create
from tests.factories import make_challenge, record_win

pytestmark = pytest.mark.django_db


def test_the_challenge_answers_its_bounties_and_its_wave(workspace, client):
    vault = make_challenge(
        workspace=workspace,
        name="Vault",
        target_assignment="choice",
        targets=[
            {"codename": "Model Plum", "target": "offline"},
            {"codename": "Model Teal", "target": "offline"},
        ],
    )
    bounty_create(challenge=vault, kind="first_break", amount="50")
    bounty_create(challenge=vault, kind="fastest_n", amount="20", cap=3)
    bounty_create(
        challenge=vault,
        kind="per_break",
        amount="12.50",
        cap="100",
        currency="EUR",
        codename="Model Teal",
    )
    record_win(vault, "ana")
    opens = timezone.now() - timedelta(hours=1)
    wave_create(
        workspace=workspace,
        name="Week 1",
        challenge_ids=[vault.id],
        opens_at=opens,
        closes_at=opens + timedelta(days=7),
    )
    wave_create(
        workspace=workspace,
        name="Week 2",
        challenge_ids=[vault.id],
        opens_at=opens + timedelta(days=7),
        closes_at=opens + timedelta(days=14),
    )

    body = client.get(f"/web/api/challenges/{vault.id}").json()

    assert body["bounties"] == [
        {
            "kind": "first_break",
            "label": "First break: 50 USD",
            "amount": 50.0,
            "currency": "USD",
            "cap": None,
            "codename": "",
            "claimed": True,
            "places_left": 0,
        },
        {
            "kind": "fastest_n",
            "label": "Fastest 3: 20 USD each",
            "amount": 20.0,
            "currency": "USD",
            "cap": 3.0,
            "codename": "",
            "claimed": False,
            "places_left": 2,
        },
        {
            "kind": "per_break",
            "label": "Every break: 12.50 EUR each, up to 100 EUR (on Model Teal)",
            "amount": 12.5,
            "currency": "EUR",
            "cap": 100.0,
            "codename": "Model Teal",
            # ana's win was on no codename, so Teal's eight places are all still there.
            "claimed": False,
            "places_left": 8,
        },
    ]
    assert [(wave["name"], wave["state"]) for wave in body["waves"]] == [
        ("Week 1", "open"),
        ("Week 2", "scheduled"),
    ]
    assert body["waves"][0]["closes_at"] == body["waves"][1]["opens_at"]


def test_a_challenge_without_either_answers_empty_lists(workspace, client):
    vault = make_challenge(workspace=workspace)

    body = client.get(f"/web/api/challenges/{vault.id}").json()

    assert (body["bounties"], body["waves"]) == ([], [])


def test_the_list_reads_bounties_once_for_every_challenge(workspace, client):
    for number in range(6):
        challenge = make_challenge(workspace=workspace, name=f"Level {number}")
        bounty_create(challenge=challenge, kind="first_break", amount=str(10 + number))
        record_win(challenge, f"player-{number}")

    with CaptureQueriesContext(connection) as few:
        client.get("/web/api/challenges")
    make_challenge(workspace=workspace, name="Level 7")
    bounty_create(challenge=workspace.challenges.get(name="Level 7"), kind="first_break", amount=5)
    with CaptureQueriesContext(connection) as more:
        body = client.get("/web/api/challenges").json()

    assert len(more.captured_queries) == len(few.captured_queries)
    labels = {row["name"]: row["bounties"][0]["label"] for row in body["results"]}
    assert labels["Level 3"] == "First break: 13 USD"
    assert labels["Level 7"] == "First break: 5 USD"
    assert body["results"][0]["bounties"][0]["claimed"] is False  # Level 7: not won yet
