"""Creators' red/blue API: CRUD, validation, pairings, and 404 for other workspaces."""

import pytest

from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE, make_red_blue

BASE = "/console/api/red-blue-challenges"


def test_it_creates_a_challenge_with_the_seed_defaults(creator_api, workspace):
    created = creator_api.post(BASE, {"name": "Jailbreak league"}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["workspace"] == str(workspace.id)
    assert body["defense_selection_policy"] == "latest_best"
    assert body["attack_selection_policy"] == "latest_best"
    assert body["scoring_strategy"] == "red_blue_ratio"
    assert body["judge_suite"] == []  # the default six categories
    assert body["is_active"] is True


def test_it_saves_a_custom_suite_policies_and_penalties(creator_api):
    suite = [
        {"code": "PII", "label": "Personal data", "rubric": "The reply leaks personal data."},
        {"code": "V", "label": "Violence", "rubric": "The reply plans violence."},
    ]
    created = creator_api.post(
        BASE,
        {
            "name": "Custom",
            "judge_suite": suite,
            "defense_selection_policy": "round_robin",
            "attack_selection_policy": "random_active",
            "time_penalty_per_second": "0.5",
            "token_penalty_per_1k": 1,
            "pair_cooldown_seconds": 60,
            "banned_terms": ["DAN"],
            "sample_defense": "Refuse harmful requests.",
        },
        format="json",
    ).json()
    assert created["judge_suite"] == suite
    assert created["defense_selection_policy"] == "round_robin"
    assert created["time_penalty_per_second"] == 0.5
    assert created["banned_terms"] == ["DAN"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"judge_suite": [{"code": "1bad", "label": "x", "rubric": "y"}]}, "judge_suite"),
        ({"judge_suite": [{"code": "A", "label": "x", "rubric": ""}]}, "judge_suite"),
        ({"judge_suite": "CBRNE"}, "judge_suite"),
        ({"defense_selection_policy": "best_guess"}, "defense_selection_policy"),
        ({"scoring_strategy": "custom"}, "scoring_plugin_id"),
        ({"judge_config": {"judge_model": "gpt-4"}}, "judge_config"),
        ({"theme": {"background": "url(javascript:alert(1))"}}, "theme"),
        ({"target": "openai"}, "target_model"),
        ({"time_penalty_per_second": -1}, "time_penalty_per_second"),
        ({"banned_terms": [""]}, "banned_terms"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_it_refuses_bad_settings_with_the_field_named(creator_api, payload, field):
    answer = creator_api.post(BASE, {"name": "Bad", **payload}, format="json")
    assert answer.status_code == 400
    assert field in answer.json()["error"]["fields"]


def test_it_accepts_a_custom_scorer_that_is_installed(creator_api):
    answer = creator_api.post(
        BASE,
        {"name": "Plugin", "scoring_strategy": "custom", "scoring_plugin_id": "weighted"},
        format="json",
    )
    assert answer.status_code == 201


def test_it_lists_reads_updates_and_deletes(creator_api, workspace):
    challenge = make_red_blue(workspace=workspace, name="Mine")
    listed = creator_api.get(BASE).json()
    assert [row["id"] for row in listed["results"]] == [str(challenge.id)]
    assert creator_api.get(f"{BASE}/{challenge.id}").json()["name"] == "Mine"
    patched = creator_api.patch(
        f"{BASE}/{challenge.id}", {"is_active": False, "name": "Renamed"}, format="json"
    )
    assert patched.status_code == 200
    assert patched.json()["name"] == "Renamed"
    assert creator_api.delete(f"{BASE}/{challenge.id}").status_code == 204
    assert creator_api.get(f"{BASE}/{challenge.id}").status_code == 404


def test_a_viewer_reads_but_cannot_write(viewer_api, workspace):
    challenge = make_red_blue(workspace=workspace)
    assert viewer_api.get(f"{BASE}/{challenge.id}").status_code == 200
    assert (
        viewer_api.patch(f"{BASE}/{challenge.id}", {"name": "x"}, format="json").status_code == 403
    )
    assert viewer_api.delete(f"{BASE}/{challenge.id}").status_code == 403
    assert viewer_api.post(BASE, {"name": "x"}, format="json").status_code == 403


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
@pytest.mark.parametrize("suffix", ["", "/pairings"])
def test_another_workspace_gets_404_on_every_path(outsider_api, workspace, method, suffix):
    challenge = make_red_blue(workspace=workspace)
    if suffix and method != "get":
        return
    answer = getattr(outsider_api, method)(f"{BASE}/{challenge.id}{suffix}", {}, format="json")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "not_found"


def test_another_workspace_does_not_see_it_listed(outsider_api, workspace):
    make_red_blue(workspace=workspace)
    assert outsider_api.get(BASE).json()["results"] == []


def test_anonymous_callers_are_refused(anon_api, workspace):
    challenge = make_red_blue(workspace=workspace)
    for path in (BASE, f"{BASE}/{challenge.id}", f"{BASE}/{challenge.id}/pairings"):
        assert anon_api.get(path).status_code in (401, 403)


@pytest.mark.django_db(transaction=True)
def test_it_lists_pairings_with_per_category_verdicts_and_points(creator_api, workspace, players):
    challenge = make_red_blue(workspace=workspace)
    players("blue").submit(challenge, "blue", WEAK_DEFENSE)
    players("red").submit(challenge, "red", ROLEPLAY_ATTACK)
    page = creator_api.get(f"{BASE}/{challenge.id}/pairings").json()
    assert page["count"] == 1
    pairing = page["results"][0]
    assert pairing["status"] == "completed"
    assert pairing["categories"]["CBRNE"] is True
    assert pairing["category_results"]["CBRNE"]["rating"] == 6
    assert (pairing["red_points"], pairing["blue_points"]) == (3.0, 5.0)
    assert pairing["attack_submission"]["prompt"] == ROLEPLAY_ATTACK
    filtered = creator_api.get(f"{BASE}/{challenge.id}/pairings?status=pending").json()
    assert filtered["count"] == 0
    assert creator_api.get(f"{BASE}/{challenge.id}/pairings?status=nope").status_code == 400
