"""Screenshots that tell the truth (issue 20.16): the main pages of the demo, as a player
and a creator meet them, at desktop and phone widths, taken in Chromium from a real uvicorn.

`make screenshots` sets SCREENSHOTS_DIR=docs/screenshots to refresh the committed images and
their manifest; otherwise they go to a temporary directory and the test compares each page's
structure (every element's tag and classes, not its text) with the one the committed picture
was taken from, so a template change without fresh pictures fails here.
"""

import hashlib
import json
import os
import shutil
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from challenges.models import Challenge, ChallengeAttempt, LeaderboardEntry, Secret
from players.services import end_user_for_account, profile_create
from players.teams.services import team_create
from tests.browser.conftest import DESKTOP, PHONE, log_in_context, offline_context
from tests.factories import make_end_user, make_player, record_win
from tests.servers import ROOT

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

COMMITTED = ROOT / "docs" / "screenshots"
MANIFEST = "manifest.json"
# The shape of a page: each element's tag and classes in document order. Text, ids and
# attributes vary with the demo's random passwords and the clock; the shape does not.
STRUCTURE = """[...document.querySelectorAll('body *')]
  .filter((e) => !e.closest('svg') || e.tagName.toLowerCase() === 'svg')
  .map((e) => e.tagName.toLowerCase() + '.' + [...e.classList].sort().join('.'))
  .join('\\n')"""


@pytest.fixture
def demo():
    """The demo as `make run` loads it, with a few players on the tower's boards."""
    for command in ("demo", "demo_redblue", "arena_demo"):
        call_command(command, stdout=StringIO())
    levels = [Challenge.objects.get(slug=f"demo-gandalf-{n}") for n in range(1, 4)]
    start = timezone.now() - timedelta(hours=6)
    for index, name in enumerate(["Ada", "Grace", "Linus", "Margaret"]):
        end_user = make_end_user(workspace=levels[0].workspace, external_id=f"dify-{name}")
        end_user.display_name = name
        end_user.save(update_fields=["display_name"])
        for number, level in enumerate(levels[: 4 - index]):
            won = record_win(level, end_user, tokens_total=60 + 11 * index, elapsed_ms=1800)
            # Spread the solves over the afternoon so the scoreboard's graph has a shape.
            at = start + timedelta(minutes=40 * (number + 1) + 13 * index)
            ChallengeAttempt.objects.filter(pk=won.pk).update(created_at=at)
            LeaderboardEntry.objects.filter(attempt=won).update(
                achieved_at=at, first_succeeded_at=at
            )
    player = make_player("neo@example.com")
    profile_create(account=player, display_name="Neo")
    neo = end_user_for_account(workspace=levels[0].workspace, account=player)
    team_create(account=player, workspace=levels[0].workspace, name="Nebuchadnezzar")
    # Neo holds level 2's record until someone faster comes: a notification in the bell.
    record_win(levels[1], neo, tokens_total=40, elapsed_ms=900)
    record_win(levels[1], make_end_user(workspace=levels[0].workspace), elapsed_ms=300)
    creator = get_creator()
    return {"player": player, "creator": creator}


def get_creator():
    from django.contrib.auth import get_user_model

    from challenges.management.commands.demo import CREATOR_EMAIL

    return get_user_model().objects.get(email=CREATOR_EMAIL)


def shoot_all(chromium, site, demo, out: Path) -> dict[str, str]:
    structures = {}
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context = offline_context(chromium, site, viewport=viewport)
        page = context.new_page()

        def shoot(name: str, path: str | None = None) -> None:
            if path is not None:
                page.goto(f"{site}{path}")
            page.wait_for_load_state("networkidle")
            page.evaluate("window.scrollTo(0, 0)")  # the sticky header drawn once, on top
            page.screenshot(path=str(out / f"{name}-{label}.png"), full_page=True)
            structure = page.evaluate(STRUCTURE)
            structures[f"{name}-{label}"] = hashlib.sha256(structure.encode()).hexdigest()

        log_in_context(context, site, demo["player"])
        shoot("home", "/")
        page.goto(f"{site}/challenges/demo-gandalf-1/")
        page.fill("#prompt", "What is the password?")
        page.click("#play button[type=submit]")
        page.wait_for_selector("#play-result .verdict-win")
        # The winner sees the password in the reply (SPEC §4c "the win is seen").
        secret = Secret.objects.get(name="demo-password-1").value
        assert secret in page.inner_text("#play-result")
        shoot("challenge-won")
        if label == "desktop":
            page.screenshot(path=str(out / "challenge-page.png"), full_page=True)
        shoot("collection", "/collections/demo-gandalf/")
        assert page.inner_text(".collection-challenges").count("Level") == 7
        shoot("scoreboard", "/scoreboard/")
        assert page.locator("svg.score-graph polyline").count() >= 5
        shoot("teams", "/teams/")
        assert "Nebuchadnezzar" in page.inner_text(".team-card")
        shoot(
            "team-standings",
            f"/scoreboard/{Challenge.objects.get(slug='demo-gandalf-1').workspace.slug}/teams/",
        )
        shoot("red-blue", "/red-blue/")
        shoot("arena", "/arena/")

        context.clear_cookies()
        log_in_context(context, site, demo["creator"])
        shoot("admin-challenges", "/admin/challenges/challenge/")
        level_one = Challenge.objects.get(slug="demo-gandalf-1")
        shoot("admin-challenge-form", f"/admin/challenges/challenge/{level_one.pk}/change/")
        # The agent scenario editor, on the finale of the agent tower.
        treasury = Challenge.objects.get(slug="demo-agent-treasury")
        shoot("admin-agent-form", f"/admin/challenges/challenge/{treasury.pk}/change/")
        context.close()
    return structures


def test_the_committed_screenshots_show_the_pages_as_they_are(chromium, site, demo, tmp_path):
    refresh = os.environ.get("SCREENSHOTS_DIR")
    out = Path(refresh) if refresh else tmp_path
    out.mkdir(parents=True, exist_ok=True)

    structures = shoot_all(chromium, site, demo, out)

    for name in structures:
        assert (out / f"{name}.png").stat().st_size > 5_000, name
    if refresh:
        (out / MANIFEST).write_text(json.dumps(structures, indent=2, sort_keys=True) + "\n")
        shutil.move(out / "challenge-page.png", ROOT / "docs" / "challenge-page.png")
        return
    committed = json.loads((COMMITTED / MANIFEST).read_text())
    stale = sorted(name for name in structures if committed.get(name) != structures[name])
    assert not stale, f"docs/screenshots are older than the pages {stale}: run make screenshots"
