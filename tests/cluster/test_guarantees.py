"""SPEC §8: every guarantee holds when the processes that keep it are several and share
nothing but PostgreSQL and Redis. Calls go straight to one process (web-a, web-b, web-c)
where the test is about which one, through nginx otherwise."""

import contextlib
import json
import threading
import uuid

import httpx
from websockets.sync.client import connect

from challenges.models import BridgeDelivery, Challenge, ChallengeAttempt, LeaderboardEntry
from challenges.services.collections import collection_create, collection_set_challenges
from deploy.cluster import WEB_NAMES
from notifications.models import Event
from players.services import token_issue
from redblue.teams.services.challenges import red_blue_challenge_create
from tests.cluster.site import SECRET, bridge_call, site_create
from tests.factories import make_player, make_workspace
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE


def clients(cluster) -> dict[str, httpx.Client]:
    return {name: httpx.Client(base_url=cluster.web_url(name), timeout=30) for name in WEB_NAMES}


def board_players(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [entry["player"] for entry in response.json()["entries"]]


def socket_url(cluster, name: str, challenge_id: str) -> str:
    port = cluster.web[WEB_NAMES.index(name)]
    return f"ws://127.0.0.1:{port}/ws/leaderboards/challenge/{challenge_id}/"


def test_it_pushes_a_win_recorded_on_one_process_to_sockets_on_the_others(cluster):
    site = site_create()
    challenge = Challenge.objects.get(pk=site.challenge_id)
    collection = collection_create(
        workspace=challenge.workspace,
        user=None,
        name="Gauntlet",
        is_public=True,
        scoring_strategy="sum",
    )
    collection_set_challenges(collection=collection, challenge_ids=[challenge.id])
    collection_port = cluster.web[WEB_NAMES.index("web-c")]
    http = clients(cluster)
    with contextlib.ExitStack() as stack:
        sockets = {
            name: stack.enter_context(connect(url, origin="http://127.0.0.1", open_timeout=10))
            for name, url in [
                ("web-b", socket_url(cluster, "web-b", site.challenge_id)),
                ("web-c", socket_url(cluster, "web-c", site.challenge_id)),
                (
                    "nginx",
                    f"ws://127.0.0.1:{cluster.http}/ws/leaderboards/challenge/{site.challenge_id}/",
                ),
                (
                    "collection on web-c",
                    f"ws://127.0.0.1:{collection_port}/ws/leaderboards/collection/{collection.id}/",
                ),
            ]
        }
        for ws in sockets.values():
            assert json.loads(ws.recv(timeout=10))["entries"] == []

        won = bridge_call(http["web-a"], site, user="dify-winner")
        assert won.status_code == 200 and won.json()["challenge_succeeded"] is True, won.text

        for name, ws in sockets.items():
            pushed = json.loads(ws.recv(timeout=10))
            assert [row["player"] for row in pushed["entries"]] == ["dify-winner"], name
    # Every process serves the same new board (the shared cache), with the same ETag.
    boards = {
        name: client.get(f"/web/api/challenges/{site.challenge_id}/leaderboard")
        for name, client in http.items()
    }
    assert {name: board_players(board) for name, board in boards.items()} == {
        name: ["dify-winner"] for name in WEB_NAMES
    }
    assert len({board.headers["etag"] for board in boards.values()}) == 1


def test_it_records_one_attempt_and_one_event_for_fifty_deliveries_over_three_processes(cluster):
    site = site_create()
    http = clients(cluster)
    run_id = f"run-{uuid.uuid4()}"
    start = threading.Barrier(50)
    answers: list[httpx.Response] = []

    def deliver(n: int) -> None:
        start.wait()
        answers.append(bridge_call(http[WEB_NAMES[n % 3]], site, user="dify-racer", run_id=run_id))

    threads = [threading.Thread(target=deliver, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(answer.status_code for answer in answers) == [200] * 50
    assert len({answer.json()["attempt_id"] for answer in answers}) == 1
    replayed = sum(answer.headers.get("idempotent-replayed") == "true" for answer in answers)
    assert replayed == 49
    assert ChallengeAttempt.objects.filter(challenge_id=site.challenge_id).count() == 1
    assert BridgeDelivery.objects.filter(workflow_run_id=run_id).count() == 1
    assert LeaderboardEntry.objects.filter(challenge_id=site.challenge_id).count() == 1
    first_blood = Event.objects.filter(
        subject_id=site.challenge_id, type=Event.Type.CHALLENGE_FIRST_BLOOD
    )
    assert first_blood.count() == 1


def test_it_counts_a_players_hourly_limit_across_processes(cluster):
    site = site_create(max_attempts_per_hour=6)
    http = clients(cluster)
    statuses = [
        bridge_call(http[WEB_NAMES[n % 3]], site, user="dify-eager", output="no luck").status_code
        for n in range(12)
    ]
    assert sorted(statuses) == [200] * 6 + [429] * 6
    assert ChallengeAttempt.objects.filter(challenge_id=site.challenge_id).count() == 6


def test_no_process_records_with_a_key_another_process_revoked(cluster):
    site = site_create()
    http = clients(cluster)
    # Each process has the key, the challenge and the player in its cache.
    for name, client in http.items():
        assert bridge_call(client, site, user="dify-cached", output="no").status_code == 200, name
    revoked = http["web-b"].post(
        f"/console/api/bridge-keys/{site.bridge_key_id}/revoke",
        headers={"authorization": f"Bearer {site.creator_token}"},
    )
    assert revoked.status_code == 200, revoked.text

    for name, client in http.items():
        refused = bridge_call(client, site, user="dify-cached")
        assert refused.status_code == 401, (name, refused.text)
    assert ChallengeAttempt.objects.filter(challenge_id=site.challenge_id).count() == 3


def test_no_process_judges_by_a_secret_another_process_changed(cluster):
    site = site_create()
    http = clients(cluster)
    for name, client in http.items():
        assert bridge_call(client, site, user=f"dify-{name}", output="no").status_code == 200
    changed = http["web-c"].patch(
        f"/console/api/secrets/{site.secret_id}",
        json={"value": "MARLIN"},
        headers={"authorization": f"Bearer {site.creator_token}"},
    )
    assert changed.status_code == 200, changed.text

    for name, client in http.items():
        old = bridge_call(client, site, user=f"dify-{name}", output=f"It is {SECRET}.")
        assert old.status_code == 200 and old.json()["challenge_succeeded"] is False, name
        new = bridge_call(client, site, user=f"dify-{name}", output="It is MARLIN.")
        assert new.status_code == 200 and new.json()["challenge_succeeded"] is True, name
    wins = ChallengeAttempt.objects.filter(challenge_id=site.challenge_id, succeeded=True)
    assert wins.count() == 3


def test_no_process_records_on_a_challenge_another_process_closed(cluster):
    site = site_create()
    http = clients(cluster)
    for name, client in http.items():
        assert bridge_call(client, site, user="dify-early", output="no").status_code == 200, name
    closed = http["web-a"].patch(
        f"/console/api/challenges/{site.challenge_id}",
        json={"is_active": False},
        headers={"authorization": f"Bearer {site.creator_token}"},
    )
    assert closed.status_code == 200, closed.text

    for name, client in http.items():
        refused = bridge_call(client, site, user="dify-early")
        assert refused.status_code == 409, (name, refused.text)
        assert refused.json()["error"]["code"] == "challenge_closed"
    assert ChallengeAttempt.objects.filter(challenge_id=site.challenge_id).count() == 3


def player_headers() -> dict[str, str]:
    player = make_player(f"{uuid.uuid4().hex[:12]}@red-blue.test")
    return {"Authorization": f"Bearer {token_issue(user=player)}"}


def test_it_pushes_a_red_blue_pairing_judged_by_a_worker_to_a_socket_on_another_process(cluster):
    workspace = make_workspace(f"Cluster red/blue {uuid.uuid4().hex[:8]}")
    challenge = red_blue_challenge_create(workspace=workspace, user=None, name="Across hosts")
    blue, red = (player_headers() for _ in range(2))
    http = clients(cluster)
    submit = f"/web/api/red-blue-challenges/{challenge.id}/submit"
    port = cluster.web[WEB_NAMES.index("web-b")]
    with connect(
        f"ws://127.0.0.1:{port}/ws/leaderboards/red-blue/{challenge.id}/",
        origin="http://127.0.0.1",
        open_timeout=10,
    ) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "standings"
        defended = http["web-a"].post(
            submit, json={"team": "blue", "prompt": WEAK_DEFENSE}, headers=blue
        )
        attacked = http["web-c"].post(
            submit, json={"team": "red", "prompt": ROLEPLAY_ATTACK}, headers=red
        )
        assert (defended.status_code, attacked.status_code) == (201, 201), attacked.text
        completed = []
        while not completed:  # judged off web-b, pushed to it through Redis
            frame = json.loads(ws.recv(timeout=30))
            completed = [p for p in frame.get("pairings", []) if p["status"] == "completed"]
    assert completed[0]["categories"]["CBRNE"] is True
    assert ROLEPLAY_ATTACK not in str(frame)
