"""/admin/ is the creator dashboard (SPEC §5 Pages, issue 20.12): each challenge's attempts,
players and solve rate, recent solves, first bloods and the event feed, named and linked —
only from the creator's own workspaces — with Django's app list below."""

import pytest
from django.test import Client

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db


def test_the_admin_index_is_the_creators_dashboard(creator, workspace, other_workspace):
    vault = make_challenge(workspace=workspace, name="Moon vault", slug="moon-vault")
    make_challenge(workspace=workspace, name="Quiet one")
    hidden = make_challenge(workspace=other_workspace, name="Rival fortress")
    for external_id, passed in (("ada", True), ("bob", False), ("bob", False)):
        attempt_record(
            challenge=vault,
            end_user=make_end_user(workspace=workspace, external_id=external_id),
            verdict=Verdict(passed, "ok"),
        )
    attempt_record(
        challenge=hidden,
        end_user=make_end_user(workspace=other_workspace, external_id="eve"),
        verdict=Verdict(True, "ok"),
    )
    client = Client()
    client.force_login(creator)

    page = client.get("/admin/").content.decode()

    challenges = page[page.index('id="dashboard-challenges"') : page.index('id="dashboard-solves"')]
    assert "Moon vault" in challenges and "Quiet one" in challenges
    assert "<td>3</td><td>2</td><td>1</td>" in challenges  # attempts, players, solved by
    assert "50%" in challenges
    solves = page[page.index('id="dashboard-solves"') : page.index('id="dashboard-first-bloods"')]
    assert "ada" in solves and 'href="/challenges/moon-vault/"' in solves
    bloods = page[page.index('id="dashboard-first-bloods"') : page.index('id="dashboard-feed"')]
    assert '<a href="/challenges/moon-vault/">Moon vault</a>' in bloods
    assert "First blood: “Moon vault” was solved for the first time" in page
    assert "Rival fortress" not in page
    assert 'class="app-challenges' in page  # the app list is still there
