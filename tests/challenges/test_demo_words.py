"""The demo's passwords come from a curated list: words a player is happy to see."""

from challenges.management.commands.demo import WORD_LIST

UNWELCOME = ("suicide", "cocaine", "vasectomy", "murder", "corpse", "heroin", "genocide")


def test_the_demo_word_list_holds_no_unwelcome_word():
    words = {
        line.strip()
        for line in WORD_LIST.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert len(words) > 10_000
    assert not words & set(UNWELCOME)
