"""In Chromium against a real uvicorn server (pytest's live server has no websockets): a
win recorded elsewhere reaches an open challenge page and an open collection page over the
websocket, and each page redraws its board from the frame alone, its own row still marked,
without fetching the board. Needs PostgreSQL and Redis: the server process shares the test
database and the channel layer."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from challenges.services.collections import collection_create, collection_set_challenges
from players.services import end_user_for_account, profile_create
from tests.browser.conftest import TIMEOUT_MS, log_in_context, offline_context
from tests.factories import make_challenge, make_end_user, make_player, make_workspace, record_win

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def browser_page(chromium, base_url: str, user=None):
    context = offline_context(chromium, base_url)
    if user is not None:
        log_in_context(context, base_url, user)
    page = context.new_page()
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda data: frames.append(data)))
    return context, page, frames


def wait_for(page, condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        if condition():
            return
        page.wait_for_timeout(50)  # lets Playwright deliver the browser's events
    pytest.fail(f"timed out waiting for {what}")


def win(challenge, end_user, elapsed_ms: int) -> None:
    record_win(challenge, end_user, elapsed_ms=elapsed_ms)


def win_elsewhere(challenge, end_user, elapsed_ms: int) -> None:
    """A win recorded outside the thread where Playwright runs its event loop (the push
    after the commit waits on the channel layer, which it cannot do inside that loop)."""

    def record() -> None:
        try:
            win(challenge, end_user, elapsed_ms)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(record).result()


def test_a_push_redraws_the_challenge_board_without_a_fetch(chromium, site):
    workspace = make_workspace("Live board")
    challenge = make_challenge(
        workspace=workspace, name="Live vault", slug="live-vault", scoring_strategy="fastest"
    )
    player = make_player("tester@example.com")
    profile_create(account=player, display_name="Browser Tester")
    win_elsewhere(challenge, end_user_for_account(workspace=workspace, account=player), 300)

    context, page, frames = browser_page(chromium, site, user=player)
    page.goto(f"{site}/challenges/{challenge.slug}/")
    board = page.locator("#leaderboard")
    assert "Your rank: #1" in board.inner_text()
    wait_for(page, lambda: frames, "the socket's first frame")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    win_elsewhere(challenge, make_end_user(workspace=workspace, external_id="speedy-bob"), 100)

    page.wait_for_selector("#leaderboard .board-row:nth-child(2).me")
    rows = page.locator("#leaderboard .board-row")
    assert rows.nth(0).inner_text().split("\n")[:2] == ["1", "speedy-bob · Dify"]
    assert "Browser Tester (you)" in rows.nth(1).inner_text()
    assert "me" not in (rows.nth(0).get_attribute("class") or "")
    assert "Your rank: #2" in board.inner_text()
    assert requests == [], requests  # no board, page or API fetch after the push
    context.close()


def test_a_push_redraws_the_collection_board_without_a_fetch(chromium, site):
    workspace = make_workspace("Live collection")
    first, second = (make_challenge(workspace=workspace) for _ in range(2))
    collection = collection_create(
        workspace=workspace, user=None, name="Gauntlet", is_public=True, scoring_strategy="sum"
    )
    collection_set_challenges(collection=collection, challenge_ids=[first.id, second.id])

    context, page, frames = browser_page(chromium, site)
    page.goto(f"{site}/collections/{collection.slug}/")
    assert "No one has solved" in page.locator("#collection-leaderboard").inner_text()
    wait_for(page, lambda: frames, "the socket's first frame")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    win_elsewhere(first, make_end_user(workspace=workspace, external_id="ada"), 500)

    page.wait_for_selector("#collection-leaderboard .board-row")
    text = page.locator("#collection-leaderboard").inner_text()
    assert "ada" in text and "1/2 solved" in text
    assert requests == [], requests
    context.close()
