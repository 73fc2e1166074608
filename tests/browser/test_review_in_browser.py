"""Reviews and appeals in Chromium at 1280 and 390 px (SPEC §10): a disputed verdict waits
"under review", the creator passes it in the admin's review queue and the board shows the
win once; a player appeals a failed attempt from their history and sees the outcome. Every
player page is walked: no sideways scroll, no console error, no CSP violation."""

import threading

import pytest
from django.db import connections
from django.urls import reverse

from challenges.models import Review
from tests.browser.conftest import DESKTOP, PHONE, walked_page
from tests.challenges.panel_helpers import make_panel_challenge, play, vote_by_model
from tests.conftest import client_for
from tests.factories import make_creator, make_player, make_workspace


def _in_thread(function, *args):
    """Run a call off the test's thread: Playwright's sync API keeps an event loop on it,
    where the async play view cannot run."""
    result: list = []

    def run() -> None:
        try:
            result.append(function(*args))
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert result, "the call failed"
    return result[0]


pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_disputed_verdict_is_decided_in_the_admin_and_an_appeal_answered(
    chromium, site, fake_openai, viewport
):
    workspace = make_workspace("Acme")
    creator = make_creator(workspace=workspace, email="creator@acme.test")
    player = make_player("lighthouse@example.com")
    votes = {"judge-a": True, "judge-b": False}
    vote_by_model(fake_openai, votes)
    challenge = make_panel_challenge(workspace=workspace)
    disputed = _in_thread(play, player, challenge, "Please write a limerick about a lighthouse.")
    assert disputed["verdict_status"] == "under_review"
    challenge_url = site + reverse("challenge-page", args=[challenge.slug])

    player_page, walker = walked_page(chromium, site, viewport, player)
    player_page.goto(challenge_url)
    assert "under review" in player_page.inner_text("#history")
    assert "Nobody has solved it yet" in player_page.inner_text("#leaderboard")
    walker.check()

    admin, admin_walker = walked_page(chromium, site, viewport, creator)
    admin.goto(site + "/admin/challenges/review/")
    admin.locator("#result_list tbody a").first.click()
    admin.wait_for_selector(".review-judges")
    judges = admin.inner_text(".review-judges")
    assert "openai/judge-a" in judges and "openai/judge-b" in judges
    assert "Please write a limerick about a lighthouse." in admin.inner_text("#content")
    admin.check("input[name=outcome][value=pass]")
    admin.fill("#id_decision_reason", "It is a limerick about a lighthouse.")
    admin.click("input[name=_save]")
    admin.wait_for_url("**/admin/challenges/review/**")
    admin_walker.check(links=False)
    # The feed changes once: one first blood, in the dashboard's list and its event feed.
    admin.goto(site + "/admin/")
    assert admin.locator("#dashboard-first-bloods tbody tr").count() == 1
    assert challenge.name in admin.inner_text("#dashboard-first-bloods")
    assert admin.inner_text("#dashboard-feed").count("First blood") == 1

    player_page.goto(challenge_url)
    board = player_page.inner_text("#leaderboard")
    assert board.count("lighthouse") <= 1 and player_page.locator(".board-row").count() == 1
    assert "solved" in player_page.inner_text("#history")
    walker.check()

    votes.update({"judge-a": False, "judge-b": False})
    failed = _in_thread(play, player, challenge, "What is the weather like today?")
    assert failed["verdict_status"] == "failed"
    player_page.goto(challenge_url)
    player_page.locator("details.appeal summary").first.click()
    player_page.fill("details.appeal textarea", "The weather report rhymes: look again.")
    player_page.locator("details.appeal button[type=submit]").first.click()
    player_page.wait_for_selector(".messages")
    assert "Your appeal is filed" in player_page.inner_text(".messages")
    assert "under review" in player_page.inner_text("#history")
    walker.check()

    appeal = Review.objects.get(kind="appeal")
    decided = _in_thread(
        lambda: client_for(creator).post(
            f"/console/api/reviews/{appeal.id}",
            {"decision": "fail", "reason": "It does not rhyme."},
            format="json",
        )
    )
    assert decided.status_code == 200
    player_page.goto(challenge_url)
    assert "Appeal refused: It does not rhyme." in player_page.inner_text("#history")
    assert player_page.locator(".board-row").count() == 1
    admin.goto(site + "/admin/")
    assert admin.inner_text("#dashboard-feed").count("First blood") == 1
    walker.check()
    player_page.context.close()
    admin.context.close()
