"""Only players who opted in (`share_attempts`, off by default) are in the dataset."""

import json

import pytest

from players.models import PlayerProfile
from tests.conftest import client_for
from tests.exports.conftest import body_of, export_url, play

pytestmark = pytest.mark.django_db


def dataset_players(creator_api, challenge) -> set[str]:
    text = body_of(creator_api.get(export_url(challenge, "dataset")))
    return {json.loads(line)["player"] for line in text.splitlines()}


def test_sharing_is_off_until_the_player_turns_it_on(private_player):
    api = client_for(private_player)
    assert api.get("/web/api/me").json()["share_attempts"] is False
    turned = api.patch("/web/api/me/profile", {"share_attempts": True}, format="json")
    assert turned.status_code == 200
    assert turned.json()["share_attempts"] is True
    assert PlayerProfile.objects.get(account=private_player).share_attempts is True
    bad = api.patch("/web/api/me/profile", {"share_attempts": "perhaps"}, format="json")
    assert bad.status_code == 400
    assert "share_attempts" in bad.json()["error"]["fields"]


def test_a_player_who_did_not_opt_in_is_in_no_row(
    creator_api, vault, played, private_player, sharer
):
    text = body_of(creator_api.get(export_url(vault, "dataset")))
    assert "Private." not in text
    assert "datasets_path" not in text  # the private player's win
    assert private_player.email not in text and sharer.email not in text
    assert f"account:{private_player.pk}" not in text
    assert len(dataset_players(creator_api, vault)) == 1

    # Opting in adds their attempts, past ones included; opting out removes them again.
    api = client_for(private_player)
    api.patch("/web/api/me/profile", {"share_attempts": True}, format="json")
    assert len(dataset_players(creator_api, vault)) == 2
    api.patch("/web/api/me/profile", {"share_attempts": False}, format="json")
    assert len(dataset_players(creator_api, vault)) == 1


def test_the_pseudonym_is_stable_across_the_workspace_and_differs_elsewhere(
    creator_api, vault, played, sharer, workspace, other_workspace
):
    from tests.factories import make_challenge, make_creator

    second = make_challenge(workspace=workspace, name="Second level")
    play(client_for(sharer), second, "hello")
    assert dataset_players(creator_api, vault) == dataset_players(creator_api, second)

    elsewhere = make_challenge(workspace=other_workspace, name="Elsewhere")
    play(client_for(sharer), elsewhere, "hello")
    other_api = client_for(make_creator(workspace=other_workspace))
    assert dataset_players(other_api, elsewhere).isdisjoint(dataset_players(creator_api, vault))


def test_the_profile_page_has_the_toggle(sharer):
    import re

    from django.test import Client

    browser = Client()
    browser.force_login(sharer)
    page = browser.get("/profile/").content.decode()
    (toggle,) = re.findall(r'<input[^>]*name="share_attempts"[^>]*>', page)
    assert "checked" in toggle
    assert "Share my attempts in public datasets" in page

    # Saving the form without the box ticked turns sharing off.
    saved = browser.post("/profile/", {"display_name": "Sharer"})
    assert saved.status_code == 302
    assert PlayerProfile.objects.get(account=sharer).share_attempts is False
