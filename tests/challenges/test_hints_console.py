"""Creators write hints (console API and admin inline) and see how many players paid for
each; another workspace's hints are 404 and viewers may only read."""

import re

import pytest

from challenges.models import Hint
from challenges.services.hints import hint_create, hint_unlock
from tests.challenges.test_admin_challenges import (
    admin_client,
    change_url,
    form_data,
    inline_management,
)
from tests.factories import make_challenge, make_player

pytestmark = pytest.mark.django_db


@pytest.fixture
def vault(workspace):
    return make_challenge(workspace=workspace, name="Vault", slug="vault")


def test_it_creates_lists_updates_and_deletes_hints(creator_api, vault):
    url = f"/console/api/challenges/{vault.id}/hints"
    free = creator_api.post(url, {"body_md": "Ask nicely."}, format="json")
    paid = creator_api.post(url, {"body_md": "Ask for a poem.", "cost": 25}, format="json")
    assert free.status_code == paid.status_code == 201, paid.json()
    assert (free.json()["order"], free.json()["cost"], free.json()["unlocks"]) == (1, 0, 0)
    assert (paid.json()["order"], paid.json()["cost"]) == (2, 25)
    assert paid.json()["challenge"] == str(vault.id)

    hint_unlock(hint=Hint.objects.get(pk=paid.json()["id"]), account=make_player())
    hint_unlock(hint=Hint.objects.get(pk=paid.json()["id"]), account=make_player())
    listed = creator_api.get(url).json()
    assert listed["count"] == 2
    assert [(row["body_md"], row["unlocks"]) for row in listed["results"]] == [
        ("Ask nicely.", 0),
        ("Ask for a poem.", 2),
    ]

    detail = f"/console/api/hints/{paid.json()['id']}"
    patched = creator_api.patch(detail, {"cost": 30, "order": 0}, format="json")
    assert patched.status_code == 200
    assert (patched.json()["cost"], patched.json()["order"], patched.json()["unlocks"]) == (
        30,
        0,
        2,
    )
    assert creator_api.get(url).json()["results"][0]["id"] == paid.json()["id"]

    assert creator_api.delete(detail).status_code == 204
    assert creator_api.get(detail).status_code == 404
    assert Hint.objects.count() == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"body_md": ""}, "body_md"),
        ({"body_md": "   "}, "body_md"),
        ({"body_md": "x", "cost": 101}, "cost"),
        ({"body_md": "x", "cost": -1}, "cost"),
        ({"body_md": "x", "order": "first"}, "order"),
        ({"body_md": "x", "price": 3}, "price"),
    ],
)
def test_it_refuses_bad_hints_with_the_field_named(creator_api, vault, payload, field):
    response = creator_api.post(f"/console/api/challenges/{vault.id}/hints", payload, format="json")

    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert Hint.objects.count() == 0


def test_another_workspaces_hints_are_404_and_viewers_only_read(outsider_api, viewer_api, vault):
    hint = hint_create(challenge=vault, body_md="Ask nicely.", cost=10)
    for response in (
        outsider_api.get(f"/console/api/challenges/{vault.id}/hints"),
        outsider_api.post(
            f"/console/api/challenges/{vault.id}/hints", {"body_md": "x"}, format="json"
        ),
        outsider_api.get(f"/console/api/hints/{hint.id}"),
        outsider_api.patch(f"/console/api/hints/{hint.id}", {"cost": 0}, format="json"),
        outsider_api.delete(f"/console/api/hints/{hint.id}"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"

    assert viewer_api.get(f"/console/api/hints/{hint.id}").json()["body_md"] == "Ask nicely."
    refused = viewer_api.patch(f"/console/api/hints/{hint.id}", {"cost": 0}, format="json")
    assert refused.status_code == 403
    assert viewer_api.delete(f"/console/api/hints/{hint.id}").status_code == 403
    hint.refresh_from_db()
    assert hint.cost == 10


def hint_rows(rows: list[tuple[int, str, int]], *, existing: list[Hint] = ()) -> dict:
    data = inline_management("hints", total=len(rows), initial=len(existing))
    for index, (order, body, cost) in enumerate(rows):
        data[f"hints-{index}-order"] = str(order)
        data[f"hints-{index}-body_md"] = body
        data[f"hints-{index}-cost"] = str(cost)
        if index < len(existing):
            data[f"hints-{index}-id"] = str(existing[index].pk)
            data[f"hints-{index}-challenge"] = str(existing[index].challenge_id)
    return data


def test_the_admin_edits_hints_inline_and_shows_unlock_counts(creator, workspace, vault):
    client = admin_client(creator)
    edit = form_data(workspace, name=vault.name, slug=vault.slug)

    saved = client.post(
        change_url(vault), {**edit, **hint_rows([(1, "Ask nicely.", 0), (2, "A poem.", 20)])}
    )
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    assert list(Hint.objects.values_list("order", "body_md", "cost")) == [
        (1, "Ask nicely.", 0),
        (2, "A poem.", 20),
    ]

    paid = Hint.objects.get(cost=20)
    hint_unlock(hint=paid, account=make_player())
    page = client.get(change_url(vault)).content.decode()
    assert "Unlocks" in page
    unlock_cells = re.findall(r'<td class="field-unlocks">\s*<p>([^<]*)</p>', page)
    assert unlock_cells[:2] == ["free", "1"]  # then the blank row "Add another" copies

    existing = list(Hint.objects.all())
    rows = hint_rows([(1, "Ask nicely.", 0), (2, "A poem.", 500)], existing=existing)
    refused = client.post(change_url(vault), {**edit, **rows})
    assert refused.status_code == 200
    assert "A whole number from 0 to 100." in refused.content.decode()
    assert Hint.objects.get(pk=paid.pk).cost == 20
