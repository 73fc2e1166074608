import csv
import io

import pytest
from django.test import Client

from challenges.models import ChallengeAttempt
from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db

LIST = "/admin/challenges/challengeattempt/"
EXPORT = "/admin/challenges/challengeattempt/export/"


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def csv_rows(response) -> list[dict]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def attempts(workspace, other_workspace):
    vault = make_challenge(workspace=workspace, name="Acme Vault")
    maze = make_challenge(workspace=workspace, name="Acme Maze")
    rival = make_challenge(workspace=other_workspace, name="Rival Fortress")
    alice = make_end_user(workspace=workspace, external_id="=HYPERLINK(evil)")
    bob = make_end_user(workspace=workspace, external_id="bob-dify")
    record = attempt_record
    return {
        "win": record(
            challenge=vault,
            end_user=alice,
            verdict=Verdict(passed=True, feedback="ok", rating=8),
            prompt="p",
            response="r",
            tokens_total=120,
            elapsed_ms=900,
            source="bridge",
            workflow_run_id="run-1",
        ),
        "loss": record(
            challenge=vault,
            end_user=bob,
            verdict=Verdict(passed=False, feedback="no"),
            prompt="p",
            response="r",
            tokens_total=50,
            elapsed_ms=400,
        ),
        "maze": record(challenge=maze, end_user=bob, verdict=Verdict(passed=False)),
        "rival": record(
            challenge=rival,
            end_user=make_end_user(workspace=other_workspace, external_id="rival-player"),
            verdict=Verdict(passed=True),
        ),
    }


def test_it_lists_the_workspaces_attempts_with_their_numbers(creator, attempts):
    response = admin_client(creator).get(LIST)

    assert response.status_code == 200
    body = response.content.decode()
    assert "bob-dify" in body
    assert "=HYPERLINK(evil)" in body
    assert "rival-player" not in body
    assert "Rival Fortress" not in body  # not even in the challenge filter
    assert "Acme Maze" in body
    assert "3 challenge attempts" in body
    assert 'id="export-csv"' in body


def test_it_searches_by_the_players_external_id(creator, attempts):
    body = admin_client(creator).get(LIST, {"q": "bob-dify"}).content.decode()

    assert "2 challenge attempts" in body


def test_it_is_read_only_even_for_an_owner(creator, attempts):
    attempt = attempts["win"]
    client = admin_client(creator)

    page = client.get(f"{LIST}{attempt.pk}/change/")
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert client.get(f"{LIST}add/").status_code == 403
    assert client.post(f"{LIST}{attempt.pk}/change/", {"succeeded": ""}).status_code == 403
    assert client.post(f"{LIST}{attempt.pk}/delete/", {"post": "yes"}).status_code == 403
    assert ChallengeAttempt.objects.count() == 4


def test_it_hides_other_workspaces_attempts(outsider, attempts):
    response = admin_client(outsider).get(f"{LIST}{attempts['win'].pk}/change/")

    assert response.status_code in (302, 404)
    assert b"run-1" not in response.content


def test_it_exports_the_filtered_attempts_as_csv(creator, attempts):
    vault = attempts["win"].challenge
    client = admin_client(creator)

    rows = csv_rows(client.get(EXPORT, {"challenge__id__exact": str(vault.pk)}))

    assert len(rows) == 2
    by_player = {row["end_user_external_id"]: row for row in rows}
    assert set(by_player) == {"'=HYPERLINK(evil)", "bob-dify"}
    win = by_player["'=HYPERLINK(evil)"]
    assert win["succeeded"] == "True"
    assert win["judge_rating"] == "8"
    assert win["tokens_total"] == "120"
    assert win["elapsed_ms"] == "900"
    assert win["source"] == "bridge"
    assert win["workflow_run_id"] == "run-1"
    assert win["challenge"] == "Acme Vault"
    assert win["player"].startswith("'=")

    successes = csv_rows(client.get(EXPORT, {"succeeded__exact": "1"}))
    assert [row["attempt_id"] for row in successes] == [str(attempts["win"].pk)]

    everything = csv_rows(client.get(EXPORT))
    assert len(everything) == 3
    assert "rival-player" not in {row["end_user_external_id"] for row in everything}


def test_it_exports_the_selected_attempts_with_the_action(creator, attempts):
    chosen = [attempts["loss"].pk, attempts["rival"].pk]

    response = admin_client(creator).post(
        LIST, {"action": "export_csv", "_selected_action": [str(pk) for pk in chosen]}
    )

    rows = csv_rows(response)
    assert [row["attempt_id"] for row in rows] == [str(attempts["loss"].pk)]


def test_it_gives_the_export_to_workspace_members_only(player, attempts):
    assert Client().get(EXPORT).status_code == 302
    client = Client()
    client.force_login(player)
    response = client.get(EXPORT)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
