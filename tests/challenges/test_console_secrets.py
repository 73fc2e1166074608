import pytest

from challenges.models import Secret
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

URL = "/console/api/secrets"


def test_it_creates_a_secret_without_ever_returning_its_value(creator_api):
    response = creator_api.post(URL, {"name": "flag", "value": "PURPLE-OTTER-77"}, format="json")
    assert response.status_code == 201
    assert "PURPLE-OTTER-77" not in response.content.decode()
    assert response.json()["name"] == "flag"
    listed = creator_api.get(URL)
    assert "PURPLE-OTTER-77" not in listed.content.decode()
    assert listed.json()["results"][0]["has_value"] is True


def test_it_replaces_a_value(creator_api, workspace):
    secret = Secret.objects.create(workspace=workspace, name="flag", value="old")
    response = creator_api.patch(f"{URL}/{secret.id}", {"value": "new"}, format="json")
    assert response.status_code == 200
    secret.refresh_from_db()
    assert secret.value == "new"


def test_it_refuses_a_duplicate_name(creator_api, workspace):
    Secret.objects.create(workspace=workspace, name="flag", value="x")
    response = creator_api.post(URL, {"name": "flag", "value": "y"}, format="json")
    assert response.status_code == 409
    assert Secret.objects.count() == 1


def test_it_refuses_to_delete_a_secret_in_use(creator_api, workspace):
    secret = Secret.objects.create(workspace=workspace, name="flag", value="x")
    make_challenge(workspace=workspace, success_pattern="{{secret}}", secret_ref="flag")
    assert creator_api.delete(f"{URL}/{secret.id}").status_code == 409
    assert Secret.objects.filter(id=secret.id).exists()


def test_it_hides_other_workspaces_secrets(outsider_api, workspace):
    secret = Secret.objects.create(workspace=workspace, name="flag", value="x")
    for method in ("get", "patch", "delete"):
        response = getattr(outsider_api, method)(
            f"{URL}/{secret.id}", {"value": "y"}, format="json"
        )
        assert response.status_code == 404
    assert outsider_api.get(URL).json()["count"] == 0
    secret.refresh_from_db()
    assert secret.value == "x"


def test_a_viewer_can_neither_see_nor_write_secrets(viewer_api, workspace):
    secret = Secret.objects.create(workspace=workspace, name="flag", value="x")
    assert viewer_api.get(URL).json()["count"] == 0
    assert viewer_api.get(f"{URL}/{secret.id}").status_code == 404
    assert viewer_api.patch(f"{URL}/{secret.id}", {"value": "y"}, format="json").status_code == 404
    assert viewer_api.delete(f"{URL}/{secret.id}").status_code == 404
    assert viewer_api.post(URL, {"name": "n", "value": "v"}, format="json").status_code == 403
