"""A console update never moves a row to another workspace: the call is refused with the
field named, and the row stays where it was."""

import pytest

from challenges.models import Challenge, ChallengeCollection
from challenges.services.collections import collection_create
from redblue.models import RedBlueChallenge
from tests.factories import make_challenge
from tests.redblue.conftest import make_red_blue

pytestmark = pytest.mark.django_db


def _challenge(workspace):
    return make_challenge(workspace=workspace, name="Kept")


def _collection(workspace):
    return collection_create(workspace=workspace, user=None, name="Kept")


def _red_blue(workspace):
    return make_red_blue(workspace=workspace, name="Kept")


@pytest.mark.parametrize(
    "make, model, url, what",
    [
        (_challenge, Challenge, "/console/api/challenges", "A challenge"),
        (_collection, ChallengeCollection, "/console/api/challenge-collections", "A collection"),
        (_red_blue, RedBlueChallenge, "/console/api/red-blue-challenges", "A challenge"),
    ],
)
def test_it_refuses_to_move_a_row_to_another_workspace(
    creator_api, workspace, make, model, url, what
):
    row = make(workspace)

    answer = creator_api.patch(
        f"{url}/{row.id}", {"workspace": str(workspace.id), "name": "Moved"}, format="json"
    )

    assert answer.status_code == 400, answer.json()
    error = answer.json()["error"]
    assert error["message"] == f"{what} cannot move to another workspace."
    assert error["fields"] == {"workspace": ["Read-only after creation."]}
    kept = model.objects.get(id=row.id)
    assert (kept.workspace_id, kept.name) == (workspace.id, "Kept")
