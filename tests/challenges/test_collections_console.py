import uuid

import pytest

from challenges.models import ChallengeCollection, CollectionItem
from challenges.services.collections import collection_create
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

URL = "/console/api/challenge-collections"


def _positions(collection_id) -> list:
    return list(
        CollectionItem.objects.filter(collection_id=collection_id)
        .order_by("position")
        .values_list("challenge_id", flat=True)
    )


def test_it_creates_lists_updates_and_deletes_a_collection(creator_api, workspace):
    created = creator_api.post(
        URL,
        {
            "name": "Starter Pack",
            "app_id": "app-1",
            "instructions_md": "Solve them **all**.",
            "theme": {"accent": "#ff0000"},
            "scoring_strategy": "fastest_total",
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["slug"] == "starter-pack"
    assert body["workspace"] == str(workspace.id)
    assert body["scoring_strategy"] == "fastest_total"
    assert body["challenges"] == []

    creator_api.post(URL, {"name": "Other", "app_id": "app-2"}, format="json")
    listed = creator_api.get(URL, {"app_id": "app-1"}).json()
    assert listed["count"] == 1
    assert listed["results"][0]["id"] == body["id"]
    assert creator_api.get(URL).json()["count"] == 2

    patched = creator_api.patch(
        f"{URL}/{body['id']}", {"is_public": False, "description": "Hidden"}, format="json"
    )
    assert patched.status_code == 200
    assert patched.json()["is_public"] is False
    assert patched.json()["description"] == "Hidden"

    assert creator_api.get(f"{URL}/{body['id']}").json()["description"] == "Hidden"
    assert creator_api.delete(f"{URL}/{body['id']}").status_code == 204
    assert not ChallengeCollection.objects.filter(id=body["id"]).exists()


def test_it_gives_a_second_collection_with_the_same_name_its_own_slug(creator_api):
    first = creator_api.post(URL, {"name": "Week 1"}, format="json").json()
    second = creator_api.post(URL, {"name": "Week 1"}, format="json").json()
    assert (first["slug"], second["slug"]) == ("week-1", "week-1-2")

    clash = creator_api.patch(f"{URL}/{second['id']}", {"slug": "week-1"}, format="json")
    assert clash.status_code == 400
    assert clash.json()["error"]["fields"]["slug"] == ["This slug is taken."]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": "  "}, "name"),
        ({"name": "T", "theme": {"accent": "red; background: url(x)"}}, "theme"),
        ({"name": "T", "theme": {"position": "fixed"}}, "theme"),
        ({"name": "T", "scoring_strategy": "custom"}, "scoring_strategy"),
        ({"name": "T", "scoring_strategy": "most_wins"}, "scoring_strategy"),
        ({"name": "T", "colour": "blue"}, "colour"),
    ],
)
def test_it_refuses_invalid_collections_and_writes_nothing(creator_api, payload, field):
    response = creator_api.post(URL, payload, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["fields"]
    assert not ChallengeCollection.objects.exists()


def test_it_refuses_custom_scoring_at_save_rather_than_on_every_board_read(creator_api):
    response = creator_api.post(
        URL,
        {"name": "Plugin scored", "scoring_strategy": "custom", "scoring_entrypoint": "pkg:Scorer"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["scoring_strategy"] == [
        "Use one of sum, fastest_total, fewest_tokens_total, highest_avg_rating."
    ]
    assert not ChallengeCollection.objects.exists()


def test_it_sets_membership_and_order_in_one_put(creator_api, workspace):
    collection = collection_create(workspace=workspace, user=None, name="Ordered")
    a, b, c = (make_challenge(workspace=workspace, name=n) for n in ("A", "B", "C"))

    response = creator_api.put(
        f"{URL}/{collection.id}/challenges",
        {"challenge_ids": [str(c.id), str(a.id), str(b.id)]},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert [item["name"] for item in body["challenges"]] == ["C", "A", "B"]
    assert [item["position"] for item in body["challenges"]] == [0, 1, 2]
    assert _positions(collection.id) == [c.id, a.id, b.id]

    response = creator_api.put(
        f"{URL}/{collection.id}/challenges", {"challenge_ids": [str(b.id)]}, format="json"
    )
    assert [item["name"] for item in response.json()["challenges"]] == ["B"]
    assert _positions(collection.id) == [b.id]
    detail = creator_api.get(f"{URL}/{collection.id}").json()
    assert [item["id"] for item in detail["challenges"]] == [str(b.id)]


def test_it_refuses_unknown_and_foreign_challenge_ids_and_writes_nothing(
    creator_api, workspace, other_workspace
):
    collection = collection_create(workspace=workspace, user=None, name="Strict")
    mine = make_challenge(workspace=workspace)
    creator_api.put(
        f"{URL}/{collection.id}/challenges", {"challenge_ids": [str(mine.id)]}, format="json"
    )
    foreign = make_challenge(workspace=other_workspace)
    missing = uuid.uuid4()

    for bad in ([str(foreign.id)], [str(missing)], ["not-a-uuid"]):
        response = creator_api.put(
            f"{URL}/{collection.id}/challenges",
            {"challenge_ids": [str(mine.id), *bad]},
            format="json",
        )
        assert response.status_code == 400, response.json()
        error = response.json()["error"]
        assert error["code"] == "invalid"
        assert bad[0] in error["message"]
        assert str(mine.id) not in error["message"]
        assert _positions(collection.id) == [mine.id]

    repeated = creator_api.put(
        f"{URL}/{collection.id}/challenges",
        {"challenge_ids": [str(mine.id), str(mine.id)]},
        format="json",
    )
    assert repeated.status_code == 400
    assert _positions(collection.id) == [mine.id]

    not_a_list = creator_api.put(
        f"{URL}/{collection.id}/challenges", {"challenge_ids": "all"}, format="json"
    )
    assert not_a_list.status_code == 400
    assert "challenge_ids" in not_a_list.json()["error"]["fields"]


def test_it_hides_other_workspaces_collections(outsider_api, workspace, other_workspace):
    collection = collection_create(workspace=workspace, user=None, name="Private stuff")
    theirs = make_challenge(workspace=other_workspace)
    calls = [
        ("get", f"{URL}/{collection.id}", {}),
        ("patch", f"{URL}/{collection.id}", {"name": "Taken over"}),
        ("delete", f"{URL}/{collection.id}", {}),
        ("put", f"{URL}/{collection.id}/challenges", {"challenge_ids": [str(theirs.id)]}),
    ]
    for method, url, payload in calls:
        response = getattr(outsider_api, method)(url, payload, format="json")
        assert response.status_code == 404, (method, url)
        assert response.json()["error"]["code"] == "not_found"
    assert outsider_api.get(URL).json()["count"] == 0
    collection.refresh_from_db()
    assert collection.name == "Private stuff"
    assert not CollectionItem.objects.exists()


def test_it_answers_404_for_ids_that_are_not_uuids(creator_api):
    assert creator_api.get(f"{URL}/nope").status_code == 404
    assert creator_api.put(f"{URL}/nope/challenges", {"challenge_ids": []}).status_code == 404


def test_it_lets_viewers_read_but_not_write(viewer_api, workspace):
    collection = collection_create(workspace=workspace, user=None, name="Read only")
    challenge = make_challenge(workspace=workspace)
    assert viewer_api.get(f"{URL}/{collection.id}").status_code == 200
    assert viewer_api.get(URL).json()["count"] == 1
    calls = [
        ("post", URL, {"name": "New"}),
        ("patch", f"{URL}/{collection.id}", {"name": "Renamed"}),
        ("delete", f"{URL}/{collection.id}", {}),
        ("put", f"{URL}/{collection.id}/challenges", {"challenge_ids": [str(challenge.id)]}),
    ]
    for method, url, payload in calls:
        response = getattr(viewer_api, method)(url, payload, format="json")
        assert response.status_code == 403, (method, url)
        assert response.json()["error"]["code"] == "permission_denied"
    assert ChallengeCollection.objects.count() == 1
    assert not CollectionItem.objects.exists()


def test_it_requires_login(anon_api):
    response = anon_api.get(URL)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
