import pytest

from challenges.models import BridgeKey
from tests.bridge.conftest import EVALUATOR, bearer_client, post_json

pytestmark = pytest.mark.django_db

URL = "/console/api/bridge-keys"


def test_it_creates_a_key_shown_once_that_opens_the_bridge(creator_api, workspace, challenge):
    created = creator_api.post(URL, {"name": "dify prod"}, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["key"].startswith("whsec_")
    assert body["prefix"] == body["key"][:12]
    assert body["workspace"] == str(workspace.id)
    assert body["revoked_at"] is None

    listed = creator_api.get(URL).json()
    assert listed["count"] == 1
    row = listed["results"][0]
    assert set(row) == {
        "id",
        "workspace",
        "name",
        "prefix",
        "created_at",
        "last_used_at",
        "revoked_at",
    }
    assert body["key"] not in str(listed)

    bridge = bearer_client(body["key"])
    call = {"challenge_id": str(challenge.id), "output": "x", "workflow_run_id": "r1"}
    assert post_json(bridge, EVALUATOR, call).status_code == 200
    assert creator_api.get(URL).json()["results"][0]["last_used_at"] is not None


def test_it_revokes_a_key_by_post_or_delete(creator_api, challenge):
    keys = [creator_api.post(URL, {}, format="json").json() for _ in range(2)]
    revoked = creator_api.post(f"{URL}/{keys[0]['id']}/revoke")
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    assert creator_api.delete(f"{URL}/{keys[1]['id']}").status_code == 204
    assert BridgeKey.objects.filter(revoked_at__isnull=True).count() == 0
    for key in keys:
        call = {"challenge_id": str(challenge.id), "output": "x", "workflow_run_id": "r"}
        assert post_json(bearer_client(key["key"]), EVALUATOR, call).status_code == 401


def test_it_lets_viewers_list_but_not_create_or_revoke(creator_api, viewer_api):
    key = creator_api.post(URL, {}, format="json").json()
    assert viewer_api.get(URL).json()["count"] == 1
    assert viewer_api.post(URL, {}, format="json").status_code == 403
    assert viewer_api.post(f"{URL}/{key['id']}/revoke").status_code == 403
    assert viewer_api.delete(f"{URL}/{key['id']}").status_code == 403
    assert BridgeKey.objects.get().revoked_at is None


def test_it_hides_other_workspaces_keys(creator_api, outsider_api):
    key = creator_api.post(URL, {}, format="json").json()
    assert outsider_api.get(URL).json()["count"] == 0
    assert outsider_api.post(f"{URL}/{key['id']}/revoke").status_code == 404
    assert outsider_api.delete(f"{URL}/{key['id']}").status_code == 404
    assert outsider_api.delete(f"{URL}/not-a-uuid").status_code == 404
    assert BridgeKey.objects.get().revoked_at is None


def test_it_requires_login(anon_api):
    assert anon_api.get(URL).status_code == 401
    assert anon_api.post(URL, {}, format="json").status_code == 401
    assert not BridgeKey.objects.exists()
