"""Judge panels (SPEC §10): the rule makes the verdict, every judge's verdict is stored,
and a disagreement (or a rating within the margin) sends the attempt to review."""

import pytest

from challenges.models import ChallengeAttempt, LeaderboardEntry, Proof, Review
from tests.challenges.panel_helpers import make_panel_challenge, panel, play, vote_by_model
from tests.conftest import client_for
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("rule", "votes", "passed"),
    [
        ("majority", (True, True, False), True),
        ("majority", (True, False, False), False),
        ("all", (True, True, False), False),
        ("all", (True, True, True), True),
        ("any", (True, False, False), True),
        ("any", (False, False, False), False),
    ],
)
def test_it_decides_by_the_panels_rule(fake_openai, workspace, player, rule, votes, passed):
    vote_by_model(fake_openai, dict(zip(["judge-a", "judge-b", "judge-c"], votes, strict=True)))
    challenge = make_panel_challenge(workspace=workspace, rule=rule, review="never", n=3)

    body = play(player, challenge)

    assert body["challenge_succeeded"] is passed
    assert body["verdict_status"] == ("passed" if passed else "failed")
    attempt = ChallengeAttempt.objects.get(id=body["attempt_id"])
    assert [(judge["model"], judge["passed"]) for judge in attempt.judges] == [
        ("openai/judge-a", votes[0]),
        ("openai/judge-b", votes[1]),
        ("openai/judge-c", votes[2]),
    ]
    assert {judge["rating"] for judge in attempt.judges} <= {1, 9}
    assert LeaderboardEntry.objects.filter(challenge=challenge).exists() is passed
    assert not Review.objects.exists()


def test_a_disagreement_goes_to_review_with_no_verdict_shown(fake_openai, workspace, player):
    vote_by_model(fake_openai, {"judge-a": True, "judge-b": False})
    challenge = make_panel_challenge(workspace=workspace)

    body = play(player, challenge)

    assert body["challenge_succeeded"] is None
    assert body["verdict_status"] == "under_review"
    assert body["proof_id"] is None
    assert "under review" in body["judge_feedback"]
    review = Review.objects.get()
    assert (review.kind, review.status, str(review.attempt_id)) == (
        "panel",
        "open",
        body["attempt_id"],
    )
    assert not LeaderboardEntry.objects.exists() and not Proof.objects.exists()
    history = client_for(player).get(f"/web/api/challenges/{challenge.id}/attempts").json()
    assert history["results"][0]["verdict_status"] == "under_review"


def test_agreeing_judges_need_no_review(fake_openai, workspace, player):
    vote_by_model(fake_openai, {"judge-a": True, "judge-b": True})
    challenge = make_panel_challenge(workspace=workspace)

    body = play(player, challenge)

    assert (body["challenge_succeeded"], body["verdict_status"]) == (True, "passed")
    assert body["proof_id"] and not Review.objects.exists()


def test_a_rating_within_the_margin_goes_to_review(fake_openai, workspace, player):
    challenge = make_panel_challenge(workspace=workspace, review="margin", margin=1)
    vote_by_model(fake_openai, {"judge-a": 9, "judge-b": 6})  # 6 is within 1 of 5
    assert play(player, challenge)["verdict_status"] == "under_review"

    vote_by_model(fake_openai, {"judge-a": 9, "judge-b": 8})
    assert play(player, challenge)["verdict_status"] == "passed"
    assert Review.objects.count() == 1


def test_review_never_lets_the_rule_decide_a_disagreement(fake_openai, workspace, player):
    vote_by_model(fake_openai, {"judge-a": True, "judge-b": False})
    challenge = make_panel_challenge(workspace=workspace, rule="any", review="never")

    assert play(player, challenge)["verdict_status"] == "passed"


@pytest.mark.parametrize(
    ("judge_panel", "field_message"),
    [
        ({"judges": [{"judge_model": "openai/x"}]}, "from 2 to 5 judges"),
        ({**panel(), "rule": "most"}, "'rule' must be one of"),
        ({**panel(), "review": "sometimes"}, "'review' must be one of"),
        ({**panel(), "review_margin": -1}, "'review_margin'"),
        ({**panel(), "judges": [{"judge_model": "nope"}, {}]}, "Judge 1:"),
        ({**panel(), "extra": 1}, "Unknown panel setting"),
    ],
)
def test_a_bad_panel_is_refused_when_saved(creator_api, judge_panel, field_message):
    response = creator_api.post(
        "/console/api/challenges",
        {
            "name": "Bad panel",
            "evaluator_type": "llm-judge",
            "goal": "x",
            "judge_panel": judge_panel,
        },
        format="json",
    )
    assert response.status_code == 400
    assert field_message in str(response.json()["error"]["fields"])


def test_a_panel_needs_the_llm_judge_evaluator(creator_api):
    response = creator_api.post(
        "/console/api/challenges",
        {"name": "Rules panel", "success_pattern": "x", "judge_panel": panel()},
        format="json",
    )
    assert response.status_code == 400
    assert "llm-judge" in str(response.json()["error"]["fields"]["judge_panel"])


def test_the_console_shows_each_judges_verdict(fake_openai, workspace, player, creator_api):
    vote_by_model(fake_openai, {"judge-a": True, "judge-b": False})
    challenge = make_panel_challenge(workspace=workspace)
    play(player, challenge)

    rows = creator_api.get(f"/console/api/challenges/{challenge.id}/attempts").json()["results"]

    assert rows[0]["verdict_status"] == "under_review"
    assert [judge["model"] for judge in rows[0]["judges"]] == [
        "openai/judge-a",
        "openai/judge-b",
    ]


def test_the_admin_edits_a_panel_without_json(creator, workspace):
    from challenges.models import Challenge
    from tests.challenges.test_admin_challenges import ADD, admin_client, form_data

    client = admin_client(creator)
    page = client.get(ADD).content.decode()
    assert 'name="panel_judge_models"' in page and 'name="judge_panel"' not in page

    saved = client.post(
        ADD,
        form_data(
            workspace,
            evaluator_type="llm-judge",
            judge_pass_threshold="6",
            panel_judge_models="openai/judge-a\n  openai/judge-b \n",
            panel_rule="all",
            panel_review="margin",
            panel_review_margin="1",
        ),
    )

    assert saved.status_code == 302, saved.context["adminform"].form.errors
    challenge = Challenge.objects.get()
    assert challenge.judge_panel == {
        "judges": [
            {"judge_model": "openai/judge-a", "pass_threshold": 6},
            {"judge_model": "openai/judge-b", "pass_threshold": 6},
        ],
        "rule": "all",
        "review": "margin",
        "review_margin": 1,
    }
    edit = client.get(f"/admin/challenges/challenge/{challenge.pk}/change/").content.decode()
    assert "openai/judge-a\nopenai/judge-b</textarea>" in edit

    refused = client.post(
        ADD,
        form_data(workspace, name="One judge", evaluator_type="llm-judge", panel_judge_models="x"),
    )
    assert refused.status_code == 200
    assert "from 2 to 5 judges" in str(refused.context["adminform"].form.errors)


def test_a_disputed_conversation_turn_goes_to_review(fake_openai, workspace, player):
    vote_by_model(fake_openai, {"judge-a": True, "judge-b": False})
    challenge = make_challenge(
        workspace=workspace,
        name="Lighthouse talk",
        evaluator_type="llm-judge",
        goal="Make the model write a limerick about a lighthouse.",
        judge_panel=panel(),
        mode="conversation",
        max_turns=3,
    )
    api = client_for(player)
    session = api.post(f"/web/api/challenges/{challenge.id}/sessions", {}, format="json").json()

    turn = api.post(
        f"/web/api/sessions/{session['id']}/turns", {"prompt": "A limerick, please."}, format="json"
    ).json()

    assert turn["challenge_succeeded"] is None
    review = Review.objects.get()
    assert str(review.attempt_id) == turn["attempt_id"]
    assert ChallengeAttempt.objects.get(id=turn["attempt_id"]).verdict_status == "under_review"
