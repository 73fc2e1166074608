"""Issue 8, finding 2: no admin answers a filter on a secret value (an oracle that
recovered a 13-character secret in 233 requests), and viewers never open secrets."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

from challenges.models import Challenge, Secret
from challenges.services.attempts import attempt_record
from challenges.services.bridge_keys import bridge_key_create
from challenges.services.secrets import secret_create
from judging.verdicts import Verdict
from players.models import PlayerProfile
from players.scoping import field_holds_secret, lookup_touches_secret
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db

SECRET = "zebra-quartz-7731"
LOOKUPS = ("", "__exact", "__startswith", "__istartswith", "__contains", "__regex")


def secret_paths(model, *, hops: int = 3, seen: tuple = ()) -> set[str]:
    """Every query-string path from `model` to a secret-bearing field, up to `hops` hops."""
    paths = set()
    for field in model._meta.get_fields():
        name = field.name
        if field_holds_secret(field):
            paths.add(name)
        elif field.is_relation and field.related_model and hops > 1:
            if field.related_model in seen:
                continue
            for sub in secret_paths(field.related_model, hops=hops - 1, seen=(*seen, model)):
                paths.add(f"{name}__{sub}")
    return paths


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def everything(workspace, creator):
    secret = secret_create(workspace=workspace, name="vault", value=SECRET)
    secret_create(workspace=workspace, name="dify-app-key", value="app-Zq81kd02")
    bridge_key_create(workspace=workspace, name="dify prod")
    challenge = make_challenge(
        workspace=workspace, secret_ref="vault", success_pattern="{{secret}}"
    )
    attempt_record(
        challenge=challenge,
        end_user=make_end_user(workspace=workspace),
        verdict=Verdict(passed=True, feedback="ok"),
        prompt="p",
        response=f"it is {SECRET}",
    )
    PlayerProfile.objects.get_or_create(account=creator, defaults={"display_name": "Owner"})
    return secret


def test_it_answers_a_value_filter_the_same_whether_the_guess_is_right_or_wrong(
    creator, everything
):
    client = admin_client(creator)
    url = "/admin/challenges/secret/"
    for lookup in ("value", "value__startswith", "value__regex", "value__contains"):
        right = client.get(url, {lookup: SECRET if lookup == "value" else SECRET[:3]})
        wrong = client.get(url, {lookup: "Q" * 3})
        assert right.status_code == wrong.status_code == 400, lookup
        assert right.content == wrong.content, lookup
    spans = client.get(
        "/admin/challenges/challenge/", {"workspace__secrets__value__startswith": "z"}
    )
    assert spans.status_code == 400


def test_it_refuses_every_secret_lookup_on_every_registered_admin(everything):
    superuser = get_user_model().objects.create_superuser(
        username="root", email="root@example.com", password="correct-horse-9"
    )
    client = admin_client(superuser)
    tried = 0
    for model, model_admin in admin.site._registry.items():
        changelist = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        assert client.get(changelist).status_code == 200, changelist
        for path in sorted(secret_paths(model)):
            for suffix in LOOKUPS:
                lookup = path + suffix
                assert lookup_touches_secret(model, lookup), lookup
                assert not model_admin.lookup_allowed(lookup, "z", None), (changelist, lookup)
                right = client.get(changelist, {lookup: "z"})
                wrong = client.get(changelist, {lookup: "Q"})
                assert right.status_code == wrong.status_code == 400, (changelist, lookup)
                assert right.content == wrong.content, (changelist, lookup)
                tried += 1
    # Secrets, hashes and encrypted copies, reached directly and through relations.
    assert tried > 100
    assert "value" in secret_paths(Secret)
    assert {
        "workspace__secrets__value",
        "workspace__bridge_keys__key_hash",
        "created_by__password",
    } <= secret_paths(Challenge)


def test_it_keeps_secret_fields_out_of_every_search_box():
    for model, model_admin in admin.site._registry.items():
        for field in model_admin.search_fields:
            path = field.lstrip("^=@")
            assert not lookup_touches_secret(model, path), (model, field)


def test_it_keeps_a_viewer_out_of_secrets_in_the_admin_and_the_console(
    viewer, viewer_api, everything
):
    client = admin_client(viewer)
    for url in (
        "/admin/challenges/secret/",
        "/admin/challenges/secret/?value__startswith=z",
        f"/admin/challenges/secret/{everything.pk}/change/",
    ):
        assert client.get(url).status_code == 403, url
    index = client.get("/admin/").content.decode()
    assert "/admin/challenges/secret/" not in index
    assert "/admin/challenges/challenge/" in index

    listed = viewer_api.get("/console/api/secrets")
    assert listed.status_code == 200
    assert listed.json()["count"] == 0
    assert viewer_api.get(f"/console/api/secrets/{everything.pk}").status_code == 404
