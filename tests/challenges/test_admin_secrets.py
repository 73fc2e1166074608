import pytest
from django.contrib.admin.models import LogEntry
from django.test import Client

from challenges.models import Secret
from challenges.services.attempts import attempt_record
from challenges.services.secrets import secret_create
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db

SECRET = "zebra-quartz-7731"
NEW_SECRET = "ocelot-basalt-4420"
LIST = "/admin/challenges/secret/"
ADD = "/admin/challenges/secret/add/"


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def fetch(client, url, data=None):
    response = client.post(url, data) if data is not None else client.get(url)
    assert response.status_code in (200, 302), (url, response.status_code)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body.decode()


def test_it_creates_a_secret_and_never_shows_its_value(creator, viewer, workspace):
    client = admin_client(creator)
    response, _ = fetch(
        client, ADD, {"workspace": str(workspace.pk), "name": "vault", "new_value": SECRET}
    )
    assert response.status_code == 302
    secret = Secret.objects.get()
    assert secret.value == SECRET
    assert str(secret) == "vault"

    challenge = make_challenge(
        workspace=workspace, success_pattern="{{secret}}", secret_ref="vault", name="Vault"
    )
    attempt_record(
        challenge=challenge,
        end_user=make_end_user(workspace=workspace),
        verdict=Verdict(
            passed=True, feedback=f"It said {SECRET}", raw={"judge_said": f"found {SECRET}"}
        ),
        prompt="tell me",
        response=f"the password is {SECRET}",
    )
    change = f"/admin/challenges/secret/{secret.pk}/change/"
    challenge_change = f"/admin/challenges/challenge/{challenge.pk}/change/"
    pages = [
        "/admin/",
        "/admin/challenges/",
        LIST,
        ADD,
        change,
        f"/admin/challenges/secret/{secret.pk}/history/",
        f"/admin/challenges/secret/{secret.pk}/delete/",
        "/admin/challenges/challenge/",
        challenge_change,
        f"/admin/challenges/challenge/{challenge.pk}/history/",
        "/admin/challenges/challengeattempt/",
        "/admin/challenges/challengeattempt/export/",
        f"/admin/challenges/challengeattempt/{challenge.attempts.get().pk}/change/",
    ]
    for url in pages:
        _, body = fetch(client, url)
        assert SECRET not in body, url
    _, body = fetch(client, pages[-1])
    assert "found [redacted]" in body
    # "Try it" shows the model's reply as given (the creator's own tool); a reply that
    # does not give the secret away carries nothing of it.
    _, body = fetch(client, f"/admin/challenges/challenge/{challenge.pk}/try/", {"prompt": "Hi"})
    assert SECRET not in body
    _, body = fetch(admin_client(viewer), challenge_change)
    assert SECRET not in body
    # Viewers do not open secrets at all.
    for url in (LIST, change):
        assert admin_client(viewer).get(url).status_code == 403, url

    # The password box never carries a value, and a search on the value (echoed back as
    # typed) finds nothing.
    _, body = fetch(client, change)
    assert 'type="password" name="new_value"' in body
    assert 'name="new_value" value=' not in body
    _, body = fetch(client, f"{LIST}?q={SECRET}")
    assert "0 secrets" in body


def test_it_replaces_the_value_and_keeps_it_when_left_blank(creator, workspace):
    secret = secret_create(workspace=workspace, name="vault", value=SECRET)
    client = admin_client(creator)
    change = f"/admin/challenges/secret/{secret.pk}/change/"

    response, _ = fetch(client, change, {"new_value": ""})
    assert response.status_code == 302
    secret.refresh_from_db()
    assert secret.value == SECRET

    response, _ = fetch(client, change, {"new_value": NEW_SECRET})
    assert response.status_code == 302
    secret.refresh_from_db()
    assert secret.value == NEW_SECRET
    assert secret.name == "vault"

    messages = list(LogEntry.objects.values_list("change_message", "object_repr"))
    assert messages
    for change_message, object_repr in messages:
        assert SECRET not in change_message and NEW_SECRET not in change_message
        assert object_repr == "vault"
    _, body = fetch(client, f"/admin/challenges/secret/{secret.pk}/history/")
    assert "Changed Value." in body
    assert NEW_SECRET not in body and SECRET not in body


def test_it_refuses_a_secret_without_a_value_or_with_a_bad_name(creator, workspace):
    client = admin_client(creator)

    _, body = fetch(client, ADD, {"workspace": str(workspace.pk), "name": "vault", "new_value": ""})
    assert "A secret needs a value." in body
    _, body = fetch(
        client, ADD, {"workspace": str(workspace.pk), "name": "has space", "new_value": "x"}
    )
    assert "Use 1–100 letters" in body
    secret_create(workspace=workspace, name="vault", value=SECRET)
    _, body = fetch(
        client, ADD, {"workspace": str(workspace.pk), "name": "vault", "new_value": "y"}
    )
    assert "already exists" in body
    assert Secret.objects.count() == 1


def test_it_will_not_delete_a_secret_a_challenge_uses(creator, workspace):
    secret = secret_create(workspace=workspace, name="vault", value=SECRET)
    make_challenge(
        workspace=workspace, name="Vault", success_pattern="{{secret}}", secret_ref="vault"
    )
    client = admin_client(creator)

    response = client.post(f"/admin/challenges/secret/{secret.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert Secret.objects.filter(pk=secret.pk).exists()
    page = client.get(response["Location"]).content.decode()
    assert "The secret is used by: Vault" in page
    assert SECRET not in page


def test_it_keeps_other_workspaces_secrets_out_of_reach(outsider, viewer, workspace):
    secret = secret_create(workspace=workspace, name="acme-vault", value=SECRET)
    change = f"/admin/challenges/secret/{secret.pk}/change/"

    client = admin_client(outsider)
    listed = client.get(LIST).content.decode()
    assert "acme-vault" not in listed
    opened = client.get(change)
    assert opened.status_code in (302, 404)
    assert b"acme-vault" not in opened.content
    client.post(change, {"new_value": "hijacked"})

    read_only = admin_client(viewer)
    assert read_only.post(change, {"new_value": "hijacked"}).status_code == 403
    assert read_only.get(ADD).status_code == 403
    secret.refresh_from_db()
    assert secret.value == SECRET
