"""Reads that tolerate lag come from the replica; a player who wrote reads their own
writes; writes and everything else stay on the primary (config/replicas.py). The replica's
replay is paused, so what it lacks is certain."""

import time

import httpx

from deploy import cluster as deployment
from tests.cluster.site import (
    WINNING,
    bridge_call,
    replay_paused,
    replica_caught_up,
    site_create,
)


def board(site, limit: int = 20) -> str:
    return f"/web/api/challenges/{site.challenge_id}/leaderboard?limit={limit}"


def names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [entry["player"] for entry in response.json()["entries"]]


def test_it_shows_a_win_to_its_player_at_once_and_to_others_once_the_replica_has_it(cluster):
    site = site_create(players=1)
    player = {"authorization": f"Bearer {site.player_tokens[0]}"}
    with httpx.Client(base_url=cluster.base_url, timeout=30) as http, replay_paused(cluster):
        won = http.post(
            f"/web/api/challenges/{site.challenge_id}/attempts",
            json={"prompt": WINNING},
            headers=player,
        )
        assert won.status_code == 201, won.text
        assert won.json()["challenge_succeeded"] is True

        # The player's own view (pinned to the primary by their write): the win is there.
        assert len(names(http.get(board(site), headers=player))) == 1
        # Anyone else's read of the same board comes from the replica, which lacks it.
        assert names(http.get(board(site))) == []
        # The default board is the shared cache's, refreshed from the primary after commit.
        assert len(names(http.get(board(site, 10)))) == 1
    # Replay resumed: the replica has it.
    with httpx.Client(base_url=cluster.base_url, timeout=30) as http:
        for _ in range(100):
            if names(http.get(board(site))):
                break
        assert len(names(http.get(board(site)))) == 1


def test_it_reads_from_the_primary_while_the_replica_is_down_and_goes_back_to_it(cluster):
    site = site_create()
    with httpx.Client(base_url=cluster.base_url, timeout=30) as http:
        won = bridge_call(http, site, user="dify-first")
        assert won.status_code == 200 and won.json()["challenge_succeeded"] is True
        replica_caught_up(cluster)
        deployment.pg_stop("replica")
        try:
            answers = []
            for _ in range(60):
                sent = time.monotonic()
                answers.append((http.get(board(site)), time.monotonic() - sent))
        finally:
            deployment.pg_start("replica")
        # Every read answered, from the primary: the win made before the stop is there.
        assert [response.status_code for response, _ in answers] == [200] * 60
        assert all(names(response) == ["dify-first"] for response, _ in answers)
        # Each process waits for its replica once (the pool's 2 s), then rests it.
        assert max(seconds for _, seconds in answers) < 3
        print("slowest read with the replica down:", max(seconds for _, seconds in answers))

        # Back: once its rest is over each process probes it and reads from it again.
        with replay_paused(cluster):
            second = bridge_call(http, site, user="dify-second")
            assert second.status_code == 200, second.text
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if all(names(http.get(board(site))) == ["dify-first"] for _ in range(6)):
                    break
                time.sleep(0.5)
            else:
                raise AssertionError("reads did not go back to the replica")
