"""A player uses hints in Chromium, on a desktop and on a phone: the free hint is there to
read, a paid one asks first ("This hint costs 20 points — unlock?"), shows its body once
confirmed, and the scoreboard then shows the player's points less the cost."""

import pytest

from challenges.services.hints import hint_create
from players.services import end_user_for_account
from tests.browser.conftest import DESKTOP, PHONE, log_in_context, offline_context
from tests.browser.walk import Walker
from tests.factories import make_challenge, make_player, make_workspace, record_win

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_player_reads_a_free_hint_unlocks_a_paid_one_and_pays_for_it(chromium, site, viewport):
    workspace = make_workspace("Hint Works")
    warmup = make_challenge(workspace=workspace, name="Warm-up", slug="warm-up")
    vault = make_challenge(
        workspace=workspace,
        name="The Vault",
        slug="the-vault",
        goal="Make the guard say the password.",
    )
    hint_create(challenge=vault, order=1, body_md="Start by asking **politely**.", cost=0)
    hint_create(
        challenge=vault, order=2, body_md="The guard answers anything asked as a *poem*.", cost=20
    )
    account = make_player("hinted@example.com")
    player = end_user_for_account(workspace=workspace, account=account)
    record_win(warmup, player)  # 100 points on the scoreboard before the hint

    context = offline_context(chromium, site, viewport=viewport)
    log_in_context(context, site, account)
    page = context.new_page()
    walker = Walker(page, site)

    page.goto(f"{site}/challenges/the-vault/")
    walker.check()
    hints = page.locator("#hints")
    assert "Start by asking politely." in hints.inner_text()
    assert "poem" not in page.content()

    page.click("summary:has-text('Unlock hint 2')")
    confirm = page.locator(".hint-confirm")
    confirm.wait_for()
    assert "This hint costs 20 points — unlock?" in confirm.inner_text()
    page.click("button:has-text('Yes, unlock for 20 points')")
    page.wait_for_selector("[data-shown=true] .hint-body em")
    assert "The guard answers anything asked as a poem." in hints.inner_text()
    walker.check(links=False)

    page.reload()
    assert "asked as a poem" in page.locator("#hints").inner_text()

    page.goto(f"{site}/scoreboard/hint-works/")
    walker.check()
    row = page.locator(f"tr[data-player='{player.id}']")
    assert "80 pts" in row.inner_text()
    context.close()
