"""Two imports racing for the same new slugs into two workspaces: the unique index decides,
one import lands whole and the other is refused whole."""

import threading

import pytest
from django.db import connection

from core.errors import ApplicationError
from redblue.porting.document import event_parse
from redblue.porting.importing import event_import
from tests import factories
from tests.conftest import require_service
from tests.porting.test_import_errors import GOOD


@pytest.mark.django_db(transaction=True)
def test_one_of_two_racing_imports_wins_and_the_other_writes_nothing():
    require_service("PostgreSQL", connection.vendor == "postgresql", "a race needs real locks")
    workspaces = [factories.make_workspace("Racer A"), factories.make_workspace("Racer B")]
    start = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def importer(workspace):
        try:
            start.wait()
            event_import(workspace=workspace, document=event_parse(GOOD), user=None)
            outcomes[workspace.slug] = "imported"
        except ApplicationError as error:
            outcomes[workspace.slug] = error.message
        finally:
            connection.close()

    threads = [threading.Thread(target=importer, args=(w,)) for w in workspaces]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert sorted(outcome == "imported" for outcome in outcomes.values()) == [False, True]
    winner = next(w for w in workspaces if outcomes[w.slug] == "imported")
    loser = next(w for w in workspaces if w is not winner)
    assert "slug" in outcomes[loser.slug]
    counts = {
        w.slug: [
            w.secrets.count(),
            w.challenges.count(),
            w.challenge_collections.count(),
            w.red_blue_challenges.count(),
        ]
        for w in workspaces
    }
    assert counts == {winner.slug: [1, 2, 1, 1], loser.slug: [0, 0, 0, 0]}
