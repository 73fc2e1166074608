"""Bounties and waves in Chromium, at 1280 and 390 px: a creator offers a bounty in the
admin, players break the challenge, the dashboard shows what is owed and the payouts CSV
downloads with links to the proofs; the player's page shows the bounty and the wave.
The wins come first (services touched once the browser runs would meet its event loop):
what a bounty owes is read from the wins, so one offered afterwards pays them."""

import csv
import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from challenges.models import Bounty
from challenges.services.waves import wave_create
from tests.browser.conftest import DESKTOP, PHONE, log_in_context, offline_context
from tests.browser.walk import Walker
from tests.factories import make_challenge, make_creator, make_workspace, record_win

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_bounty_is_offered_won_and_paid_out(chromium, site, viewport):
    workspace = make_workspace("Bounty Cup")
    creator = make_creator(workspace=workspace, email="organiser@bounty.test")
    challenge = make_challenge(workspace=workspace, name="Paid Vault", slug="paid-vault")
    opens = timezone.now() - timedelta(hours=1)
    wave_create(
        workspace=workspace,
        name="Week 1",
        challenge_ids=[challenge.id],
        opens_at=opens,
        closes_at=opens + timedelta(days=7),
    )

    # Three players break it before the bounty exists: payouts are read from the wins.
    for player in ("ana", "ben", "cy"):
        record_win(challenge, player)

    organiser = offline_context(chromium, site, viewport)
    log_in_context(organiser, site, creator)
    admin = organiser.new_page()
    walker = Walker(admin, site)
    admin.goto(f"{site}/admin/challenges/bounty/add/")
    walker.check(links=False)
    admin.select_option("#id_challenge", str(challenge.pk))
    admin.select_option("#id_kind", "fastest_n")
    admin.fill("#id_amount", "25")
    admin.fill("#id_cap", "2")
    admin.click("input[name=_save]")
    admin.wait_for_selector(".messagelist .success")
    assert Bounty.objects.get().cap == 2

    admin.goto(f"{site}/admin/")
    walker.check(links=False)
    module = admin.locator("#dashboard-bounties").inner_text()
    caption = admin.locator("#dashboard-bounties caption").text_content()
    assert "Paid Vault" in module and "Fastest 2: 25 USD each" in module
    assert "owed now: 50 USD" in caption
    assert "Week 1" in module
    with admin.expect_download() as download_info:
        admin.click("#dashboard-bounties a[download]")
    text = Path(download_info.value.path()).read_text()
    table = list(csv.DictReader(io.StringIO(text)))
    assert [row["player"] for row in table] == ["ana", "ben"]
    assert all("/proofs/" in row["proof_url"] for row in table)

    visitor = offline_context(chromium, site, viewport)
    page = visitor.new_page()
    page_walker = Walker(page, site)
    page.goto(f"{site}/challenges/{challenge.slug}/")
    page_walker.check(links=False)
    card = page.locator("#bounties").inner_text()
    assert "Fastest 2: 25 USD each" in card and "claimed" in card
    assert "Wave “Week 1”" in card and "open now" in card
