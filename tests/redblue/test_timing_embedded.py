"""The embedded default judges eagerly: the submission's answer already holds the result.
The time it takes is printed for docs/redblue.md."""

import time

import pytest

from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_embedded_default_answers_with_the_judged_pairing(red_blue, players, capsys):
    players("defender").submit(red_blue, "blue", WEAK_DEFENSE)
    timings = []
    for n in range(10):
        attacker = players(f"attacker-{n}")
        attacker.end_user(red_blue)
        started = time.monotonic()
        answer = attacker.submit(red_blue, "red", ROLEPLAY_ATTACK)
        timings.append((time.monotonic() - started) * 1000)
        assert answer.json()["pairings"][0]["status"] == "completed"
    timings.sort()
    with capsys.disabled():
        print(
            f"\n[redblue timing, embedded default] submission to judged pairing median "
            f"{timings[len(timings) // 2]:.0f} ms, max {timings[-1]:.0f} ms over 10"
        )
