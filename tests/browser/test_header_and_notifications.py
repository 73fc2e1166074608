"""A player's header at 1280 and 390 px (issue 20): the sections are in it, the bell opens a
panel that stays on the screen, and a notification lands on the challenge it names."""

import pytest

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from players.services import end_user_for_account, profile_create
from tests.browser.conftest import DESKTOP, PHONE, log_in_context, offline_context
from tests.browser.walk import Walker
from tests.factories import make_challenge, make_end_user, make_player, make_workspace
from tests.redblue.conftest import make_red_blue

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def beaten_player():
    """A player whose record on a challenge was beaten: one unread notification."""
    workspace = make_workspace("Header")
    challenge = make_challenge(
        workspace=workspace, name="Moon vault", slug="moon-vault", scoring_strategy="fastest"
    )
    make_red_blue(workspace=workspace, name="Weapons desk")
    account = make_player("holder@example.com")
    profile_create(account=account, display_name="A rather long display name")
    holder = end_user_for_account(workspace=workspace, account=account)
    for end_user, elapsed_ms in ((holder, 800), (make_end_user(workspace=workspace), 100)):
        attempt_record(
            challenge=challenge,
            end_user=end_user,
            verdict=Verdict(True, "ok"),
            elapsed_ms=elapsed_ms,
        )
    return account


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_it_opens_a_notification_from_the_bell_and_lands_on_its_challenge(
    chromium, site, beaten_player, viewport
):
    context = offline_context(chromium, site, viewport=viewport)
    log_in_context(context, site, beaten_player)
    page = context.new_page()
    walker = Walker(page, site)

    page.goto(f"{site}/")
    page.locator(".notification-count").wait_for()
    walker.check()
    for name in ("Challenges", "Red vs blue", "Arena", "Scoreboard", "Sign out"):
        assert (
            page.get_by_role("link", name=name)
            .or_(page.get_by_role("button", name=name))
            .first.is_visible()
        ), name
    assert page.locator(".nav-user").is_visible()

    page.locator(".notifications > summary").click()
    panel = page.locator(".notifications-panel")
    box = panel.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    item = panel.get_by_role("link", name="Your record on “Moon vault” was beaten")
    item.click()
    page.wait_for_url(f"{site}/challenges/moon-vault/")
    walker.check()

    page.get_by_role("link", name="Red vs blue").click()
    page.wait_for_url(f"{site}/red-blue/")
    walker.check()
    page.get_by_role("link", name="Weapons desk").first.click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Weapons desk"
    walker.check()
    page.get_by_role("link", name="Arena").click()
    page.wait_for_url(f"{site}/arena/")
    walker.check()
    context.close()


def test_the_scoreboard_graph_opens_on_its_newest_part_on_a_phone(chromium, site, beaten_player):
    context = offline_context(chromium, site, viewport=PHONE)
    page = context.new_page()
    walker = Walker(page, site)

    page.goto(f"{site}/scoreboard/")
    walker.check()

    box = page.locator(".graph-scroll").bounding_box()
    graph = page.locator(".graph-scroll svg").bounding_box()
    assert graph["width"] > box["width"]  # it scrolls in its own box…
    assert abs((graph["x"] + graph["width"]) - (box["x"] + box["width"])) < 2  # …from the right
    context.close()
