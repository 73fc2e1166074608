"""The home page lists a tower's levels in climbing order, and a level the player cannot
play yet says so instead of offering "Play" (issue 20.11)."""

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from players.services import end_user_for_account
from tests.factories import record_win

pytestmark = pytest.mark.django_db


def levels_on(page: str) -> list[tuple[int, bool]]:
    """(level number, locked) for each Gandalf level card, in page order."""
    cards = re.findall(r'<li class="card challenge-card">(.*?)</li>', page, re.DOTALL)
    found = []
    for card in cards:
        number = re.search(r"Gandalf level (\d)", card)
        if number:
            found.append((int(number.group(1)), 'data-locked="true"' in card))
    return found


def test_it_lists_the_levels_in_order_and_locks_what_a_player_cannot_play(player):
    call_command("demo", stdout=StringIO())
    from challenges.models import Challenge

    visitor = Client().get("/").content.decode()
    assert levels_on(visitor) == [(1, False)] + [(n, True) for n in range(2, 8)]

    browser = Client()
    browser.force_login(player)
    level_one = Challenge.objects.get(slug="demo-gandalf-1")
    record_win(level_one, end_user_for_account(workspace=level_one.workspace, account=player))
    page = browser.get("/").content.decode()
    assert levels_on(page) == [(1, False), (2, False)] + [(n, True) for n in range(3, 8)]
    assert "See the level" in page
