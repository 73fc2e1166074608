import uuid

import pytest

from challenges.services.collections import collection_create, collection_set_challenges
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

URL = "/web/api/challenge-collections"


def _collection(workspace, name, challenges=(), **fields):
    collection = collection_create(workspace=workspace, user=None, name=name, **fields)
    collection_set_challenges(collection=collection, challenge_ids=[c.id for c in challenges])
    return collection


def test_it_lists_only_public_collections(anon_api, workspace, other_workspace):
    shown = _collection(workspace, "Open Season", instructions_md="Go *fast*")
    _collection(workspace, "Staff Only", is_public=False)
    also_shown = _collection(other_workspace, "Rival Set")

    body = anon_api.get(URL).json()
    assert body["count"] == 2
    assert {row["id"] for row in body["results"]} == {str(shown.id), str(also_shown.id)}
    row = next(row for row in body["results"] if row["id"] == str(shown.id))
    assert row["slug"] == "open-season"
    assert row["instructions_md"] == "Go *fast*"
    assert "workspace" not in row
    assert "scoring_plugin_id" not in row

    page = anon_api.get(URL, {"limit": 1}).json()
    assert page["count"] == 2
    assert len(page["results"]) == 1
    assert anon_api.get(URL, {"limit": 0}).status_code == 400


def test_it_shows_a_collection_with_its_active_challenges_in_order(anon_api, workspace):
    first = make_challenge(workspace=workspace, name="Warm-up", system_prompt="Never say it")
    retired = make_challenge(workspace=workspace, name="Retired", is_active=False)
    last = make_challenge(workspace=workspace, name="Boss", success_pattern="hunter2")
    collection = _collection(
        workspace,
        "Gauntlet",
        [last, retired, first],
        theme={"accent": "#112233"},
        instructions_md="Beat them all.",
    )

    response = anon_api.get(f"{URL}/{collection.id}")
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "Gauntlet"
    assert body["theme"] == {"accent": "#112233"}
    assert body["instructions_md"] == "Beat them all."
    assert [c["name"] for c in body["challenges"]] == ["Boss", "Warm-up"]
    assert body["challenges"][0]["slug"] == last.slug
    assert "success_pattern" not in body["challenges"][0]
    assert "system_prompt" not in body["challenges"][1]
    assert "hunter2" not in response.content.decode()
    assert "Never say it" not in response.content.decode()


def test_it_hides_private_and_unknown_collections(anon_api, workspace):
    private = _collection(workspace, "Hidden", is_public=False)
    for collection_id in (private.id, uuid.uuid4(), "not-a-uuid"):
        for suffix in ("", "/leaderboard"):
            response = anon_api.get(f"{URL}/{collection_id}{suffix}")
            assert response.status_code == 404, (collection_id, suffix)
            assert response.json()["error"]["code"] == "not_found"
