import pytest
from django.contrib.admin.models import LogEntry
from django.test import Client

from challenges.models import BridgeKey
from challenges.services.bridge_keys import bridge_key_create

pytestmark = pytest.mark.django_db

LIST = "/admin/challenges/bridgekey/"
ADD = "/admin/challenges/bridgekey/add/"


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def plain_key_in(body: str) -> str:
    return body.split('<code id="plain-key">')[1].split("</code>")[0]


def test_it_shows_a_new_key_once_then_only_its_prefix(creator, workspace):
    client = admin_client(creator)

    created = client.post(ADD, {"workspace": str(workspace.pk), "name": "Dify prod"})

    assert created.status_code == 200
    plain = plain_key_in(created.content.decode())
    assert plain.startswith("whsec_")
    key = BridgeKey.objects.get()
    assert key.name == "Dify prod"
    assert key.workspace == workspace
    assert plain.startswith(key.prefix)
    assert plain not in key.key_hash

    for url in (LIST, f"{LIST}{key.pk}/change/", f"{LIST}{key.pk}/history/", "/admin/"):
        body = client.get(url).content.decode()
        assert plain not in body, url
        assert plain[len(key.prefix) :] not in body, url
    assert f"{key.prefix}…" in client.get(LIST).content.decode()
    for change_message, object_repr in LogEntry.objects.values_list(
        "change_message", "object_repr"
    ):
        assert plain not in change_message and plain not in object_repr


def test_it_revokes_keys_with_the_action(creator, workspace, other_workspace):
    mine, _ = bridge_key_create(workspace=workspace, name="mine")
    theirs, _ = bridge_key_create(workspace=other_workspace, name="theirs")

    response = admin_client(creator).post(
        LIST,
        {"action": "revoke", "_selected_action": [str(mine.pk), str(theirs.pk)]},
        follow=True,
    )

    assert response.status_code == 200
    assert "Revoked 1 key(s)." in response.content.decode()
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.revoked_at is not None
    assert theirs.revoked_at is None


def test_it_lets_a_viewer_see_keys_but_not_create_or_revoke_them(viewer, workspace):
    key, _ = bridge_key_create(workspace=workspace, name="mine")
    client = admin_client(viewer)

    listed = client.get(LIST)
    assert listed.status_code == 200
    assert key.prefix in listed.content.decode()
    assert client.get(ADD).status_code == 403
    assert client.post(ADD, {"workspace": str(workspace.pk), "name": "x"}).status_code == 403
    client.post(LIST, {"action": "revoke", "_selected_action": [str(key.pk)]})
    key.refresh_from_db()
    assert key.revoked_at is None
    assert BridgeKey.objects.count() == 1


def test_it_keeps_keys_of_other_workspaces_out_of_reach(outsider, workspace, other_workspace):
    key, _ = bridge_key_create(workspace=workspace, name="acme-key")
    client = admin_client(outsider)

    assert "acme-key" not in client.get(LIST).content.decode()
    opened = client.get(f"{LIST}{key.pk}/change/")
    assert opened.status_code in (302, 404)
    assert b"acme-key" not in opened.content
    refused = client.post(ADD, {"workspace": str(workspace.pk), "name": "planted"})
    assert refused.status_code == 200
    assert "Select a valid choice" in refused.content.decode()
    assert BridgeKey.objects.count() == 1
