"""Where people see bounties and waves: the challenge page tells players what breaking it
pays and when its wave plays; the creator dashboard shows each bounty, what it owes now and
the total, only for the creator's own workspaces; the admin adds both through the services'
rules."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from challenges.models import Bounty, Wave
from challenges.services.bounties import bounty_create
from challenges.services.waves import wave_create
from tests.factories import make_challenge, record_win

pytestmark = pytest.mark.django_db


def test_the_challenge_page_shows_the_bounties_and_the_wave(workspace, client):
    vault = make_challenge(workspace=workspace, name="Vault")
    bounty_create(challenge=vault, kind="first_break", amount="50")
    bounty_create(challenge=vault, kind="fastest_n", amount="20", cap=3)
    record_win(vault, "ana")
    opens = timezone.now() - timedelta(hours=1)
    wave_create(
        workspace=workspace,
        name="Week 1",
        challenge_ids=[vault.id],
        opens_at=opens,
        closes_at=opens + timedelta(days=7),
    )

    page = client.get(f"/challenges/{vault.slug}/").content.decode()

    assert "First break: 50 USD" in page
    assert "claimed" in page
    assert "Fastest 3: 20 USD each" in page
    assert "2 left" in page
    assert "Wave “Week 1”" in page
    assert "open now" in page


def test_a_page_without_bounties_or_waves_has_no_such_card(workspace, client):
    vault = make_challenge(workspace=workspace)
    assert 'id="bounties"' not in client.get(f"/challenges/{vault.slug}/").content.decode()


def test_the_dashboard_shows_bounties_and_what_they_owe(creator, workspace, other_workspace):
    vault = make_challenge(workspace=workspace, name="Moon vault")
    bounty_create(challenge=vault, kind="per_break", amount="12.50", cap="100")
    bounty_create(challenge=vault, kind="first_break", amount="50")
    record_win(vault, "ana")
    record_win(vault, "ben")
    rival = make_challenge(workspace=other_workspace, name="Rival fortress")
    bounty_create(challenge=rival, kind="first_break", amount="999")
    record_win(rival, "eve")
    client = Client()
    client.force_login(creator)

    page = client.get("/admin/").content.decode()

    module = page[page.index('id="dashboard-bounties"') : page.index('id="dashboard-near-copies"')]
    assert "Moon vault" in module and "Rival fortress" not in module
    assert '<strong class="payout-total">75 USD</strong>' in module
    assert "<td>25 USD</td>" in module and "<td>50 USD</td>" in module
    assert 'href="/console/api/bounties/payouts.csv"' in module
    # The link works with the admin's own session.
    assert client.get("/console/api/bounties/payouts.csv").status_code == 200


def test_the_admin_adds_a_bounty_by_the_services_rules(creator, workspace):
    vault = make_challenge(workspace=workspace)
    client = Client()
    client.force_login(creator)
    form = {"challenge": str(vault.id), "codename": "", "kind": "per_break", "amount": "10"}
    form |= {"currency": "USD", "cap": ""}

    refused = client.post("/admin/challenges/bounty/add/", form)
    added = client.post("/admin/challenges/bounty/add/", {**form, "cap": "30"})

    assert refused.status_code == 200
    assert "per-break bounty needs a cap" in refused.content.decode()
    assert added.status_code == 302
    bounty = Bounty.objects.get()
    assert (bounty.workspace_id, bounty.cap) == (workspace.id, 30)


def test_the_admin_schedules_a_wave_of_its_own_challenges(creator, workspace, other_workspace):
    vault = make_challenge(workspace=workspace)
    theirs = make_challenge(workspace=other_workspace)
    client = Client()
    client.force_login(creator)
    opens = timezone.now() + timedelta(days=1)
    form = {
        "workspace": str(workspace.id),
        "name": "Week 1",
        "challenges": [str(vault.id)],
        "opens_at_0": opens.strftime("%Y-%m-%d"),
        "opens_at_1": "10:00:00",
        "closes_at_0": opens.strftime("%Y-%m-%d"),
        "closes_at_1": "09:00:00",
    }

    backwards = client.post("/admin/challenges/wave/add/", form)
    foreign = client.post(
        "/admin/challenges/wave/add/",
        {**form, "closes_at_1": "18:00:00", "challenges": [str(theirs.id)]},
    )
    added = client.post("/admin/challenges/wave/add/", {**form, "closes_at_1": "18:00:00"})

    assert "closes after it opens" in backwards.content.decode()
    assert foreign.status_code == 200 and not Wave.objects.filter(name="Week 1").count() > 1
    assert added.status_code == 302, added.content.decode()[:2000]
    wave = Wave.objects.get()
    assert list(wave.challenges.all()) == [vault]
    assert wave.state == Wave.State.SCHEDULED
