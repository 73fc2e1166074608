"""Issue 8, finding 14: unknown bridge fields, unknown API paths, ignored ?workspace= filters."""

import pytest

from challenges.models import ChallengeCollection, Secret
from challenges.services.bridge_keys import bridge_key_create
from tests.bridge.conftest import EVALUATOR, JUDGE, bearer_client, post_json, run_id
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db


@pytest.fixture
def bridge_api(workspace):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    return bearer_client(raw)


def test_it_refuses_unknown_fields_on_the_evaluator_and_names_them(bridge_api, workspace):
    challenge = make_challenge(workspace=workspace, success_pattern="open sesame")
    body = {
        "challenge_id": str(challenge.id),
        "output": "open sesame",
        "user": "dify-user",
        "workflow_run_id": run_id(),
        "scoree": 10,
        "is_admin": True,
    }
    response = post_json(bridge_api, EVALUATOR, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["fields"] == {"is_admin": ["Unknown field."], "scoree": ["Unknown field."]}
    assert "is_admin" in error["message"] and "scoree" in error["message"]
    assert not challenge.attempts.exists()


def test_it_refuses_unknown_fields_inside_the_inline_rule(bridge_api):
    body = {
        "inline": {"success_type": "contains", "success_pattern": "x", "flags": "i"},
        "output": "x",
        "workflow_run_id": run_id(),
    }
    response = post_json(bridge_api, EVALUATOR, body)
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"inline": {"flags": ["Unknown field."]}}


def test_it_refuses_unknown_fields_on_the_judge(bridge_api):
    body = {"goal": "g", "response": "r", "judge_modle": "openai/x"}
    response = post_json(bridge_api, JUDGE, body)
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"judge_modle": ["Unknown field."]}


@pytest.mark.parametrize(
    "path",
    [
        "/web/api/nope",
        "/web/api/challenges/x/nope",
        "/web/api/me/",
        "/console/api/nope",
        "/console/api/",
        "/bridge/dify/nope",
        "/bridge/",
    ],
)
@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_it_answers_unknown_api_paths_with_the_json_error(anon_api, creator_api, path, method):
    for client in (anon_api, creator_api):
        response = getattr(client, method)(path)
        assert response.status_code == 404
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("path", ["/api/nope", "/api/v1/nope/deeper"])
def test_it_answers_unknown_arena_paths_in_the_arena_error_shape(anon_api, path):
    response = anon_api.get(path)
    assert response.status_code == 404
    assert response.json() == {"error": "Not found", "code": "NOT_FOUND"}


def test_it_still_answers_pages_with_html(anon_api):
    response = anon_api.get("/no-such-page/")
    assert response.status_code == 404
    assert "application/json" not in response["Content-Type"]


LISTS = [
    "/console/api/secrets",
    "/console/api/challenges",
    "/console/api/challenge-collections",
    "/console/api/bridge-keys",
]


@pytest.fixture
def two_workspaces_of_rows(workspace, other_workspace, creator):
    from players.services import membership_set

    membership_set(workspace=other_workspace, user=creator)
    for ws in (workspace, other_workspace):
        Secret.objects.create(workspace=ws, name=f"flag-{ws.slug}", value="v")
        make_challenge(workspace=ws, name=f"Bot {ws.slug}")
        ChallengeCollection.objects.create(workspace=ws, name=f"Set {ws.slug}", slug=ws.slug)
        bridge_key_create(workspace=ws, name=f"key {ws.slug}")


@pytest.mark.parametrize("url", LISTS)
def test_it_narrows_every_console_list_to_the_workspace_asked_for(
    creator_api, workspace, other_workspace, two_workspaces_of_rows, url
):
    assert creator_api.get(url).json()["count"] == 2
    for ref in (str(other_workspace.id), other_workspace.slug):
        results = creator_api.get(url, {"workspace": ref}).json()["results"]
        assert len(results) == 1
        assert results[0]["workspace"] == str(other_workspace.id)


@pytest.mark.parametrize("url", LISTS)
def test_it_answers_404_for_a_workspace_the_caller_is_not_in(
    outsider_api, workspace, other_workspace, url
):
    Secret.objects.create(workspace=workspace, name="flag", value="v")
    for ref in (str(workspace.id), workspace.slug, "no-such-workspace"):
        response = outsider_api.get(url, {"workspace": ref})
        assert response.status_code == 404
        error = response.json()["error"]
        assert error["code"] == "not_found"
        assert "workspace" in error["fields"]
