"""The review queue (SPEC §10): a creator decides a disputed verdict once; the verdict,
the board, first blood and the events change exactly once and in order; every decision is
in the audit trail that the workspace's owners read."""

import threading

import pytest
from django.db import connection, connections

from challenges.models import ChallengeAttempt, LeaderboardEntry, Proof, Review, ReviewAudit
from challenges.services.reviews import review_decide
from notifications.models import Event, EventRecipient
from tests.challenges.panel_helpers import make_panel_challenge, play, vote_by_model
from tests.conftest import client_for, require_service
from tests.factories import make_player

pytestmark = pytest.mark.django_db

DISPUTED = {"judge-a": True, "judge-b": False}
AGREED = {"judge-a": True, "judge-b": True}


@pytest.fixture
def votes(fake_openai):
    current = dict(DISPUTED)
    vote_by_model(fake_openai, current)
    return current


def _play_with(votes, new_votes, account, challenge) -> dict:
    votes.clear()
    votes.update(new_votes)
    return play(account, challenge)


def _events(challenge, type_):
    return Event.objects.filter(subject_id=str(challenge.id), type=type_)


def test_the_creator_lists_open_reviews_with_the_transcript_and_judges(
    votes, workspace, player, creator_api
):
    challenge = make_panel_challenge(workspace=workspace)
    body = play(player, challenge, "Please write a limerick about a lighthouse.")

    rows = creator_api.get("/console/api/reviews?status=open").json()["results"]

    assert len(rows) == 1
    row = rows[0]
    assert (row["attempt_id"], row["kind"], row["status"]) == (body["attempt_id"], "panel", "open")
    assert row["transcript"]["prompt"] == "Please write a limerick about a lighthouse."
    assert row["transcript"]["response"]
    assert [(j["model"], j["passed"]) for j in row["judges"]] == [
        ("openai/judge-a", True),
        ("openai/judge-b", False),
    ]
    assert creator_api.get("/console/api/reviews?status=decided").json()["results"] == []
    assert creator_api.get("/console/api/reviews?status=maybe").status_code == 400


def test_another_workspaces_queue_is_not_shown(votes, workspace, player, outsider_api):
    challenge = make_panel_challenge(workspace=workspace)
    play(player, challenge)
    review = Review.objects.get()

    assert outsider_api.get("/console/api/reviews").json()["results"] == []
    listed = outsider_api.get(f"/console/api/reviews?workspace={workspace.slug}")
    assert listed.status_code == 404
    decided = outsider_api.post(
        f"/console/api/reviews/{review.id}", {"decision": "pass", "reason": "x"}, format="json"
    )
    assert decided.status_code == 404
    assert Review.objects.get().status == "open"


def test_a_viewer_cannot_decide(votes, workspace, player, viewer_api):
    challenge = make_panel_challenge(workspace=workspace)
    play(player, challenge)
    review = Review.objects.get()

    assert viewer_api.get("/console/api/reviews").json()["results"][0]["id"] == str(review.id)
    response = viewer_api.post(
        f"/console/api/reviews/{review.id}", {"decision": "pass", "reason": "x"}, format="json"
    )
    assert response.status_code == 403


def test_passing_a_disputed_attempt_makes_it_a_win_once(
    votes, workspace, player, creator, creator_api
):
    challenge = make_panel_challenge(workspace=workspace)
    body = play(player, challenge)
    review = Review.objects.get()

    response = creator_api.post(
        f"/console/api/reviews/{review.id}",
        {"decision": "pass", "reason": "The limerick is there."},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert (response.json()["status"], response.json()["decision"]) == ("decided", "pass")
    attempt = ChallengeAttempt.objects.get(id=body["attempt_id"])
    assert (attempt.verdict_status, attempt.challenge_succeeded) == ("passed", True)
    assert LeaderboardEntry.objects.get(challenge=challenge).attempt_id == attempt.id
    assert Proof.objects.filter(attempt=attempt).exists()
    proof = client_for().get(f"/web/api/proofs/{attempt.id}")
    assert proof.status_code == 200
    assert [(v["evaluator"], v["passed"]) for v in proof.json()["proof"]["verdicts"]] == [
        ("llm-judge", True),
        ("llm-judge", False),
        ("review", True),
    ]
    assert _events(challenge, "challenge_first_blood").count() == 1

    again = creator_api.post(
        f"/console/api/reviews/{review.id}", {"decision": "fail", "reason": "Oops"}, format="json"
    )
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "already_decided"
    assert ChallengeAttempt.objects.get(id=attempt.id).succeeded is True
    audit = creator_api.get("/console/api/audit").json()["results"]
    assert [(row["attempt_id"], row["before"], row["after"]) for row in audit] == [
        (str(attempt.id), "under_review", "passed")
    ]
    assert audit[0]["reason"] == "The limerick is there."
    assert audit[0]["actor"] == creator.get_username()
    assert audit[0]["at"]


def test_failing_a_disputed_attempt_leaves_the_board_alone(votes, workspace, player, creator_api):
    challenge = make_panel_challenge(workspace=workspace)
    body = play(player, challenge)
    review = Review.objects.get()

    response = creator_api.post(
        f"/console/api/reviews/{review.id}", {"decision": "fail", "reason": "No."}, format="json"
    )

    assert response.status_code == 200
    attempt = ChallengeAttempt.objects.get(id=body["attempt_id"])
    assert attempt.verdict_status == "failed"
    assert not LeaderboardEntry.objects.exists()
    assert not Event.objects.filter(subject_id=str(challenge.id)).exists()


def test_a_decision_needs_a_reason_and_a_known_decision(votes, workspace, player, creator_api):
    challenge = make_panel_challenge(workspace=workspace)
    play(player, challenge)
    review = Review.objects.get()
    url = f"/console/api/reviews/{review.id}"

    assert creator_api.post(url, {"decision": "pass"}, format="json").status_code == 400
    assert (
        creator_api.post(url, {"decision": "maybe", "reason": "x"}, format="json").status_code
        == 400
    )
    assert (
        creator_api.post(url, {"decision": "pass", "reason": " "}, format="json").status_code == 400
    )
    assert creator_api.post("/console/api/reviews/not-an-id", {}, format="json").status_code == 404
    assert Review.objects.get().status == "open"


def test_passing_an_earlier_attempt_moves_first_blood_once(votes, workspace, creator_api):
    first, second = make_player("first@example.com"), make_player("second@example.com")
    challenge = make_panel_challenge(workspace=workspace)
    earlier = _play_with(votes, DISPUTED, first, challenge)
    later = _play_with(votes, AGREED, second, challenge)
    assert later["verdict_status"] == "passed"
    assert _events(challenge, "challenge_first_blood").count() == 1
    review = Review.objects.get()

    creator_api.post(
        f"/console/api/reviews/{review.id}", {"decision": "pass", "reason": "ok"}, format="json"
    )

    revoked = _events(challenge, "first_blood_revoked")
    assert revoked.count() == 1
    assert revoked.get().payload["attempt_id"] == later["attempt_id"]
    assert list(
        EventRecipient.objects.filter(event=revoked.get()).values_list("account_id", flat=True)
    ) == [second.pk]
    bloods = _events(challenge, "challenge_first_blood").order_by("occurred_at")
    assert [event.payload["account_id"] for event in bloods] == [str(second.pk), str(first.pk)]
    board = LeaderboardEntry.objects.filter(challenge=challenge).order_by("achieved_at")
    assert [str(entry.attempt_id) for entry in board] == [
        earlier["attempt_id"],
        later["attempt_id"],
    ]


def test_overturning_first_blood_moves_it_to_the_next_solver(votes, workspace, creator_api):
    first, second = make_player("first@example.com"), make_player("second@example.com")
    challenge = make_panel_challenge(workspace=workspace)
    won_first = _play_with(votes, AGREED, first, challenge)
    won_second = _play_with(votes, AGREED, second, challenge)
    first_again = _play_with(votes, AGREED, first, challenge)
    assert LeaderboardEntry.objects.get(end_user__account=first).attempt_id is not None

    reopened = creator_api.post(
        f"/console/api/attempts/{won_first['attempt_id']}/reopen",
        {"reason": "The judge was fooled."},
        format="json",
    )
    assert reopened.status_code == 201
    assert reopened.json()["kind"] == "reopened"
    history = client_for(first).get(f"/web/api/challenges/{challenge.id}/attempts").json()
    shown = {row["id"]: row["verdict_status"] for row in history["results"]}
    assert shown[won_first["attempt_id"]] == "under_review"
    again = creator_api.post(
        f"/console/api/attempts/{won_first['attempt_id']}/reopen", {"reason": "x"}, format="json"
    )
    assert again.status_code == 409

    decided = creator_api.post(
        f"/console/api/reviews/{reopened.json()['id']}",
        {"decision": "fail", "reason": "Not a limerick."},
        format="json",
    )

    assert decided.status_code == 200
    attempt = ChallengeAttempt.objects.get(id=won_first["attempt_id"])
    assert (attempt.succeeded, attempt.verdict_status, attempt.proof_id) == (False, "failed", None)
    assert not Proof.objects.filter(attempt=attempt).exists()
    assert client_for().get(f"/web/api/proofs/{attempt.id}").status_code == 404
    # The player's entry is recomputed from their remaining win.
    assert (
        str(LeaderboardEntry.objects.get(end_user__account=first).attempt_id)
        == (first_again["attempt_id"])
    )
    revoked = _events(challenge, "first_blood_revoked")
    assert revoked.count() == 1
    assert revoked.get().payload["attempt_id"] == won_first["attempt_id"]
    assert revoked.get().payload["new_holder"] == str(second.pk)
    bloods = _events(challenge, "challenge_first_blood").order_by("occurred_at")
    assert [event.payload["account_id"] for event in bloods] == [str(first.pk), str(second.pk)]
    assert won_second["verdict_status"] == "passed"
    audit = creator_api.get("/console/api/audit").json()["results"]
    assert [(row["before"], row["after"]) for row in audit] == [
        ("under_review", "failed"),
        ("passed", "under_review"),
    ]


def test_only_a_passed_attempt_is_reopened(votes, workspace, player, creator_api, outsider_api):
    challenge = make_panel_challenge(workspace=workspace)
    failed = _play_with(votes, {"judge-a": False, "judge-b": False}, player, challenge)
    won = _play_with(votes, AGREED, player, challenge)
    url = "/console/api/attempts/{}/reopen"

    assert (
        creator_api.post(
            url.format(failed["attempt_id"]), {"reason": "x"}, format="json"
        ).status_code
        == 409
    )
    assert (
        outsider_api.post(url.format(won["attempt_id"]), {"reason": "x"}, format="json").status_code
        == 404
    )
    assert creator_api.post(url.format(won["attempt_id"]), {}, format="json").status_code == 400


def test_the_audit_is_for_owners_only(
    votes, workspace, player, creator_api, viewer_api, outsider_api
):
    challenge = make_panel_challenge(workspace=workspace)
    play(player, challenge)
    review = Review.objects.get()
    creator_api.post(
        f"/console/api/reviews/{review.id}", {"decision": "fail", "reason": "no"}, format="json"
    )

    assert len(creator_api.get("/console/api/audit").json()["results"]) == 1
    denied = viewer_api.get("/console/api/audit")
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "permission_denied"
    assert outsider_api.get("/console/api/audit").json()["results"] == []
    assert outsider_api.get(f"/console/api/audit?workspace={workspace.slug}").status_code == 404
    assert client_for(player).get("/console/api/audit").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_concurrent_decisions_on_one_review_decide_once(fake_openai, workspace, creator):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    vote_by_model(fake_openai, dict(DISPUTED))
    challenge = make_panel_challenge(workspace=workspace)
    player = make_player("racer@example.com")
    play(player, challenge)
    review = Review.objects.get()
    decisions = ["pass", "fail"] * 4
    start = threading.Barrier(len(decisions))
    outcomes, errors = [], []

    def decide(decision: str) -> None:
        try:
            start.wait()
            review_decide(review_id=review.id, actor=creator, decision=decision, reason="race")
            outcomes.append(decision)
        except Exception as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=decide, args=(d,)) for d in decisions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(outcomes) == 1
    assert sorted(getattr(error, "status", error) for error in errors) == [409] * 7
    assert ReviewAudit.objects.count() == 1
    won = outcomes[0] == "pass"
    assert LeaderboardEntry.objects.filter(challenge=challenge).count() == int(won)
    assert _events(challenge, "challenge_first_blood").count() == int(won)


def test_the_admin_queue_shows_the_dispute_and_decides_it(votes, workspace, player, creator):
    from tests.challenges.test_admin_challenges import admin_client

    challenge = make_panel_challenge(workspace=workspace)
    body = play(player, challenge, "Please write a limerick about a lighthouse.")
    review = Review.objects.get()
    client = admin_client(creator)

    listing = client.get("/admin/challenges/review/").content.decode()
    assert "Lighthouse" in listing and "panel" in listing
    page = client.get(f"/admin/challenges/review/{review.id}/change/").content.decode()
    assert "Please write a limerick about a lighthouse." in page
    assert "openai/judge-a" in page and "judge-b: no" in page
    assert '"passed"' not in page  # a table, not raw JSON
    assert 'name="outcome"' in page and 'name="decision_reason"' in page

    saved = client.post(
        f"/admin/challenges/review/{review.id}/change/",
        {"outcome": "pass", "decision_reason": "A fine limerick."},
    )

    assert saved.status_code == 302
    assert ChallengeAttempt.objects.get(id=body["attempt_id"]).verdict_status == "passed"
    assert ReviewAudit.objects.get().reason == "A fine limerick."
    decided = client.get(f"/admin/challenges/review/{review.id}/change/").content.decode()
    assert 'name="outcome"' not in decided
    dashboard = client.get("/admin/").content.decode()
    assert "Judge agreement" in dashboard and "0% <span" in dashboard


def test_the_admin_queue_of_another_workspace_is_hidden(votes, workspace, player, outsider):
    from tests.challenges.test_admin_challenges import admin_client

    challenge = make_panel_challenge(workspace=workspace)
    play(player, challenge)
    review = Review.objects.get()
    client = admin_client(outsider)

    assert "Lighthouse" not in client.get("/admin/challenges/review/").content.decode()
    page = client.get(f"/admin/challenges/review/{review.id}/change/")
    assert page.status_code in (302, 404)
    client.post(
        f"/admin/challenges/review/{review.id}/change/",
        {"outcome": "pass", "decision_reason": "mine now"},
    )
    assert Review.objects.get().status == "open"
    assert client.get("/admin/challenges/reviewaudit/").status_code == 200
