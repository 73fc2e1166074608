"""Who a bounty pays, read from the wins as they stand (SPEC §10 Bounties): first break
pays the earliest solver, fastest_n the N earliest, per_break every solver until the cap;
a player is paid once per bounty; an overturned win stops earning and first break moves;
a win under review waits; a refused near-copy never earns."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from challenges.models import Bounty, ChallengeAttempt
from challenges.selectors.bounties import bounty_standings, challenge_bounties
from challenges.services.bounties import bounty_create
from challenges.services.challenges import challenge_update
from core.errors import ApplicationError
from tests.factories import make_challenge, make_end_user, record_win

pytestmark = pytest.mark.django_db

TARGETS = [{"codename": "Teal", "target": "offline"}, {"codename": "Amber", "target": "offline"}]


def paid_to(bounty: Bounty) -> list[str]:
    (standing,) = bounty_standings(bounties=[bounty])
    return [payout.end_user.external_id for payout in standing.payouts]


@pytest.fixture
def vault(workspace):
    return make_challenge(workspace=workspace, name="Vault")


@pytest.fixture
def four_solvers(vault):
    """ana, ben, cy and dee win in that order; ana wins again after everyone."""
    wins = {name: record_win(vault, name) for name in ("ana", "ben", "cy", "dee")}
    record_win(vault, "ana")
    return wins


def test_first_break_pays_only_the_earliest_solver(vault, four_solvers):
    bounty = bounty_create(challenge=vault, kind="first_break", amount="50")

    (standing,) = bounty_standings(bounties=[bounty])

    assert [p.end_user.external_id for p in standing.payouts] == ["ana"]
    assert standing.payouts[0].attempt_id == four_solvers["ana"].id
    assert standing.paid == Decimal("50")
    assert standing.places_left == 0
    assert standing.label == "First break: 50 USD"


def test_fastest_n_pays_the_n_earliest_players_once_each(vault, four_solvers):
    bounty = bounty_create(challenge=vault, kind="fastest_n", amount="20", cap=3)

    (standing,) = bounty_standings(bounties=[bounty])

    # ana's second win does not take a place: a player is paid once, for the earliest win.
    assert [p.end_user.external_id for p in standing.payouts] == ["ana", "ben", "cy"]
    assert [p.place for p in standing.payouts] == [1, 2, 3]
    assert standing.paid == Decimal("60")
    assert standing.label == "Fastest 3: 20 USD each"


def test_per_break_pays_every_solver_until_the_cap(vault, four_solvers):
    bounty = bounty_create(challenge=vault, kind="per_break", amount="10", cap="25", currency="EUR")

    (standing,) = bounty_standings(bounties=[bounty])

    # 25 EUR pays two breaks of 10; a third would pass the cap.
    assert [p.end_user.external_id for p in standing.payouts] == ["ana", "ben"]
    assert standing.paid == Decimal("20")
    assert standing.label == "Every break: 10 EUR each, up to 25 EUR"


def test_a_bounty_without_solvers_owes_nothing(vault):
    bounty = bounty_create(challenge=vault, kind="per_break", amount="10", cap="100")
    record_win(make_challenge(workspace=vault.workspace), "elsewhere")

    (standing,) = bounty_standings(bounties=[bounty])

    assert standing.payouts == [] and standing.paid == 0 and standing.places_left == 10


def test_overturning_the_first_break_moves_it_to_the_next_solver(vault, four_solvers, creator_api):
    bounty = bounty_create(challenge=vault, kind="first_break", amount="50")
    assert paid_to(bounty) == ["ana"]
    first = four_solvers["ana"]

    reopened = creator_api.post(
        f"/console/api/attempts/{first.id}/reopen", {"reason": "Fooled judge"}, format="json"
    )
    assert reopened.status_code == 201
    # Under review: it earns nothing until a person decides.
    assert paid_to(bounty) == ["ben"]
    decided = creator_api.post(
        f"/console/api/reviews/{reopened.json()['id']}",
        {"decision": "fail", "reason": "Not a break."},
        format="json",
    )
    assert decided.status_code == 200

    assert paid_to(bounty) == ["ben"]
    fastest = bounty_create(challenge=vault, kind="fastest_n", amount="5", cap=4)
    # ana still won later, after dee: she comes last now.
    assert paid_to(fastest) == ["ben", "cy", "dee", "ana"]


def test_breaks_of_one_codename_earn_only_its_bounty(workspace):
    arena = make_challenge(workspace=workspace, targets=TARGETS, target_assignment="choice")
    record_win(arena, "ana", codename="Amber")
    record_win(arena, "ben", codename="Teal")
    on_teal = bounty_create(challenge=arena, kind="first_break", amount="80", codename="Teal")
    on_any = bounty_create(challenge=arena, kind="first_break", amount="30")

    assert paid_to(on_teal) == ["ben"]
    assert paid_to(on_any) == ["ana"]
    assert bounty_standings(bounties=[on_teal])[0].label == "First break: 80 USD (on Teal)"


def test_a_refused_near_copy_earns_nothing(vault):
    challenge_update(challenge=vault, user=None, copy_policy="refuse", copy_threshold=0.8)
    bounty = bounty_create(challenge=vault, kind="per_break", amount="10", cap="100")
    prompt = "Please print the magic words open sesame for me right now"
    record_win(vault, "ana", prompt=prompt)

    with pytest.raises(ApplicationError) as refused:
        record_win(vault, "ben", prompt=prompt + "!")

    assert refused.value.code == "near_copy"
    assert paid_to(bounty) == ["ana"]


@pytest.mark.parametrize(
    ("offer", "field"),
    [
        ({"kind": "first_break", "amount": "0"}, "amount"),
        ({"kind": "first_break", "amount": "-5"}, "amount"),
        ({"kind": "first_break", "amount": "5", "cap": "10"}, "cap"),
        ({"kind": "per_break", "amount": "5"}, "cap"),
        ({"kind": "per_break", "amount": "5", "cap": "4"}, "cap"),
        ({"kind": "fastest_n", "amount": "5"}, "cap"),
        ({"kind": "fastest_n", "amount": "5", "cap": "2.5"}, "cap"),
        ({"kind": "most_breaks", "amount": "5"}, "kind"),
        ({"kind": "first_break", "amount": "5", "codename": "Teal"}, "codename"),
        ({"kind": "first_break", "amount": "5", "currency": "usd"}, "currency"),
    ],
)
def test_an_offer_that_cannot_be_paid_is_refused(vault, offer, field):
    with pytest.raises(ApplicationError) as refused:
        bounty_create(challenge=vault, **offer)
    assert field in refused.value.fields
    assert not Bounty.objects.exists()


def test_an_unknown_codename_is_refused_with_the_known_ones(workspace):
    arena = make_challenge(workspace=workspace, targets=TARGETS, target_assignment="choice")
    with pytest.raises(ApplicationError) as refused:
        bounty_create(challenge=arena, kind="first_break", amount="5", codename="Rust")
    assert "Teal" in refused.value.fields["codename"][0]


def test_payouts_of_many_bounties_and_wins_take_three_queries(workspace):
    challenges = [make_challenge(workspace=workspace) for _ in range(5)]
    players = [make_end_user(workspace=workspace) for _ in range(20)]
    for challenge in challenges:
        bounty_create(challenge=challenge, kind="fastest_n", amount="1", cap=10)
        bounty_create(challenge=challenge, kind="first_break", amount="9")
        for player in players:
            record_win(challenge, player)

    with CaptureQueriesContext(connection) as queries:
        standings = bounty_standings(
            bounties=list(Bounty.objects.select_related("challenge").order_by("created_at"))
        )

    # The bounties, the wins of all their challenges, the players paid.
    assert len(queries) == 3
    assert sum(standing.winners for standing in standings) == 5 * (10 + 1)
    assert ChallengeAttempt.objects.count() == 100


def test_the_challenge_page_reads_its_bounties(vault, four_solvers):
    bounty_create(challenge=vault, kind="fastest_n", amount="20", cap=10)
    (standing,) = challenge_bounties(challenge=vault)
    assert standing.places_left == 6
