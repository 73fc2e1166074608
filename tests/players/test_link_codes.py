"""Linking a Dify identity to a site account with a one-time link code (SPEC §3)."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from challenges.models import ChallengeAttempt, LeaderboardEntry
from challenges.services.attempts import attempt_record
from challenges.services.bridge_keys import bridge_key_create
from judging.verdicts import Verdict
from players.models import EndUser, LinkCode
from players.services import end_user_for_account
from tests.bridge.conftest import EVALUATOR, bearer_client, post_json, run_id
from tests.conftest import client_for
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

LINK_CODES = "/web/api/me/link-codes"
LINKS = "/web/api/me/links"


@pytest.fixture
def bridge(workspace):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    return bearer_client(raw)


@pytest.fixture
def player_api(player):
    return client_for(player)


def run(bridge, challenge, user, tokens, *, output="open sesame", **fields):
    body = {
        "challenge_id": str(challenge.id),
        "output": output,
        "user": user,
        "workflow_run_id": run_id(),
        "tokens_total": tokens,
        **fields,
    }
    return post_json(bridge, EVALUATOR, body)


def site_success(challenge, player, tokens):
    attempt_record(
        challenge=challenge,
        end_user=end_user_for_account(workspace=challenge.workspace, account=player),
        verdict=Verdict(passed=True),
        prompt="p",
        response="open sesame",
        tokens_total=tokens,
    )


def new_code(player_api, **body) -> str:
    response = player_api.post(LINK_CODES, body, format="json")
    assert response.status_code == 201, response.json()
    assert response["Cache-Control"] == "no-store"
    return response.json()["code"]


def board(challenge) -> list[tuple[str, int]]:
    return list(
        LeaderboardEntry.objects.filter(challenge=challenge)
        .order_by("rank_value")
        .values_list("end_user__external_id", "tokens_total")
    )


def test_it_gives_a_short_lived_code_shown_once(player_api, workspace):
    response = player_api.post(LINK_CODES, {}, format="json")

    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"code", "expires_at", "workspace"}
    assert body["workspace"] == workspace.slug
    stored = LinkCode.objects.get()
    assert body["code"] not in stored.code_hash
    assert stored.expires_at - timezone.now() <= timedelta(minutes=10)


def test_it_links_and_merges_the_boards_keeping_the_better_entry(
    bridge, player_api, player, workspace
):
    both = make_challenge(workspace=workspace, scoring_strategy="fewest_tokens")
    dify_only = make_challenge(workspace=workspace, scoring_strategy="fewest_tokens")
    site_better = make_challenge(workspace=workspace, scoring_strategy="fewest_tokens")
    site_success(both, player, 50)
    site_success(site_better, player, 5)
    run(bridge, both, "dify-ann", 30)
    run(bridge, dify_only, "dify-ann", 10)
    run(bridge, site_better, "dify-ann", 40)
    account_id = f"account:{player.pk}"

    code = new_code(player_api)
    answer = run(bridge, both, "dify-ann", 99, output="no", link_code=code.lower())

    assert answer.status_code == 200, answer.json()
    assert board(both) == [(account_id, 30)]
    assert board(dify_only) == [(account_id, 10)]
    assert board(site_better) == [(account_id, 5)]
    # Every attempt of the Dify user now lists with the player's own.
    assert set(ChallengeAttempt.objects.values_list("end_user__external_id", flat=True)) == {
        account_id
    }
    # From now on the Dify user's runs record as the player.
    run(bridge, both, "dify-ann", 20)
    assert board(both) == [(account_id, 20)]
    links = player_api.get(LINKS).json()
    assert [(link["dify_user"], link["workspace"]) for link in links] == [
        ("dify-ann", workspace.slug)
    ]


def test_a_code_works_once(bridge, player_api, workspace):
    challenge = make_challenge(workspace=workspace)
    code = new_code(player_api)
    assert run(bridge, challenge, "dify-ann", 1, link_code=code).status_code == 200

    again = run(bridge, challenge, "dify-bob", 1, link_code=code)

    assert again.status_code == 400
    assert "already used" in again.json()["error"]["fields"]["link_code"][0]
    assert not EndUser.objects.filter(external_id="dify-bob", linked_to__isnull=False).exists()


def test_a_code_expires(bridge, player_api, workspace):
    challenge = make_challenge(workspace=workspace)
    code = new_code(player_api)
    LinkCode.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    response = run(bridge, challenge, "dify-ann", 1, link_code=code)

    assert response.status_code == 400
    assert "expired" in response.json()["error"]["message"]
    assert not ChallengeAttempt.objects.exists()


def test_a_code_is_refused_in_another_workspace(player_api, workspace, other_workspace):
    challenge = make_challenge(workspace=other_workspace)
    _, raw = bridge_key_create(workspace=other_workspace, name="rival dify")
    code = new_code(player_api, workspace=workspace.slug)

    response = run(bearer_client(raw), challenge, "dify-ann", 1, link_code=code)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_link_code"
    assert not EndUser.objects.filter(linked_to__isnull=False).exists()


def test_it_asks_which_workspace_when_there_are_several(player_api, workspace, other_workspace):
    response = player_api.post(LINK_CODES, {}, format="json")
    assert response.status_code == 400
    assert "workspace" in response.json()["error"]["fields"]


def test_a_link_code_needs_a_user(bridge, player_api, workspace):
    challenge = make_challenge(workspace=workspace)
    body = {
        "challenge_id": str(challenge.id),
        "output": "x",
        "workflow_run_id": run_id(),
        "link_code": new_code(player_api),
    }
    response = post_json(bridge, EVALUATOR, body)
    assert response.status_code == 400
    assert "user" in response.json()["error"]["fields"]


def test_the_profile_shows_the_link_and_can_undo_it(bridge, player, workspace):
    challenge = make_challenge(workspace=workspace)
    browser = Client()
    browser.force_login(player)
    page = browser.post("/profile/link-codes").content.decode()
    code = page.split('<p class="link-code"', 1)[1].split("<code>", 1)[1].split("</code>", 1)[0]
    run(bridge, challenge, "dify-ann", 1, link_code=code)

    page = browser.get("/profile/").content.decode()
    assert "dify-ann" in page
    assert "Undo link" in page
    assert code not in page

    linked = EndUser.objects.get(external_id="dify-ann")
    browser.post(f"/profile/links/{linked.id}/undo")

    assert "No Dify identity is linked" in browser.get("/profile/").content.decode()
    run(bridge, challenge, "dify-ann", 1)
    assert ChallengeAttempt.objects.latest("created_at").end_user == linked


def test_the_api_undoes_only_the_players_own_links(bridge, player_api, player, workspace):
    from tests.factories import make_player

    challenge = make_challenge(workspace=workspace)
    run(bridge, challenge, "dify-ann", 1, link_code=new_code(player_api))
    linked = EndUser.objects.get(external_id="dify-ann")

    stranger = client_for(make_player("someone@example.com"))
    assert stranger.delete(f"{LINKS}/{linked.id}").status_code == 404
    assert stranger.delete(f"{LINKS}/not-a-uuid").status_code == 404
    assert player_api.delete(f"{LINKS}/{linked.id}").status_code == 204
    assert player_api.get(LINKS).json() == []


def test_it_needs_a_login(anon_api):
    assert anon_api.post(LINK_CODES, {}, format="json").status_code in (401, 403)


def test_the_dify_workflow_passes_the_start_input_on(bridge, player_api, player, workspace):
    from tests.bridge.conftest import post_raw_text
    from tests.bridge.test_dify_integration import _code_main

    challenge = make_challenge(workspace=workspace)
    body = _code_main("build_body")(
        output="open sesame",
        query="hi",
        user="dify-ann",
        run_id=run_id(),
        challenge_id=str(challenge.id),
        link_code=f"  {new_code(player_api)} ",
    )["body"]

    assert post_raw_text(bridge, EVALUATOR, body).status_code == 200
    assert ChallengeAttempt.objects.get().end_user.account == player


@pytest.mark.django_db(transaction=True)
def test_the_dify_plugin_links_through_the_real_sdk(live_server):
    import subprocess
    from pathlib import Path

    from players.link_codes import link_code_create
    from tests.conftest import require_service
    from tests.factories import make_player, make_workspace

    plugin = Path(__file__).resolve().parents[2] / "integrations" / "dify" / "plugin"
    python = plugin / ".venv" / "bin" / "python"
    require_service("The Dify plugin SDK virtualenv", python.exists(), "run make install")
    workspace = make_workspace("Plugin Link Co")
    challenge = make_challenge(workspace=workspace, success_pattern="open sesame")
    _, key = bridge_key_create(workspace=workspace)
    player = make_player("linker@example.com")
    code = link_code_create(account=player, workspace=workspace).code

    result = subprocess.run(
        [str(python), "check_tools.py", live_server.url, key, str(challenge.id), code],
        cwd=plugin,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    linked = EndUser.objects.get(external_id="dify-linking-user")
    assert linked.linked_to.account == player
    assert ChallengeAttempt.objects.filter(end_user__account=player).count() == 1
