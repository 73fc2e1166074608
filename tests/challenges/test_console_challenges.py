import pytest

from challenges.models import Challenge
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

URL = "/console/api/challenges"


def test_it_creates_lists_updates_and_deletes_a_challenge(creator_api, workspace):
    created = creator_api.post(
        URL,
        {"name": "Leaky Bot", "success_type": "regex", "success_pattern": r"FLAG-\d+"},
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["slug"] == "leaky-bot"
    assert body["workspace"] == str(workspace.id)

    listed = creator_api.get(URL).json()
    assert listed["count"] == 1
    assert listed["results"][0]["id"] == body["id"]

    patched = creator_api.patch(f"{URL}/{body['id']}", {"goal": "Leak it"}, format="json")
    assert patched.status_code == 200
    assert patched.json()["goal"] == "Leak it"

    assert creator_api.delete(f"{URL}/{body['id']}").status_code == 204
    assert not Challenge.objects.exists()


def test_it_hides_other_workspaces_challenges(creator_api, outsider_api, workspace):
    challenge = make_challenge(workspace=workspace)
    for method in ("get", "patch", "delete"):
        response = getattr(outsider_api, method)(f"{URL}/{challenge.id}", {}, format="json")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert outsider_api.get(f"{URL}/{challenge.id}/attempts").status_code == 404
    assert outsider_api.get(URL).json()["count"] == 0
    assert Challenge.objects.filter(id=challenge.id).exists()


def test_it_refuses_an_invalid_regex_and_writes_nothing(creator_api):
    response = creator_api.post(
        URL, {"name": "Bad", "success_type": "regex", "success_pattern": "(a+"}, format="json"
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "missing )" in error["fields"]["success_pattern"][0]
    assert not Challenge.objects.exists()


def test_it_requires_login(anon_api):
    response = anon_api.get(URL)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
