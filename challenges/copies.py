"""Near-copies of winning prompts (SPEC §10 Copies): the normal form prompts are compared
in, and PostgreSQL pg_trgm's `similarity()` written again in Python for the embedded
default (SQLite), which has no pg_trgm.

pg_trgm splits a text into words (runs of letters and digits; everything else separates
them), pads each word with two spaces in front and one behind, and takes every three
consecutive characters of it: "cat" gives "  c", " ca", "cat", "at ". The similarity of
two texts is the number of distinct trigrams they share divided by the number of distinct
trigrams in either (|A ∩ B| / |A ∪ B|), computed in single precision (`real`).
tests/challenges/test_copies.py checks that both give the same numbers.
"""

import struct

from core.disguises import normalise


def copy_text(prompt: str) -> str:
    """The prompt as it is compared: NFKC, casefolded, whitespace collapsed to one space
    (the `contains` rule's normalisation, SPEC §10)."""
    return " ".join(normalise(prompt).split())


def _words(text: str) -> list[str]:
    words, word = [], []
    for character in text:
        if character.isalnum():
            word.append(character)
        elif word:
            words.append("".join(word))
            word = []
    if word:
        words.append("".join(word))
    return words


def trigrams(text: str) -> set[str]:
    found: set[str] = set()
    for word in _words(text.lower()):
        padded = f"  {word} "
        found.update(padded[index : index + 3] for index in range(len(padded) - 2))
    return found


def _single(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def as_real(value: float) -> float:
    """`value` rounded to single precision, as PostgreSQL's `real` holds it, given back as
    the shortest decimal that reads back as that `real` (what PostgreSQL prints)."""
    single = _single(value)
    for digits in range(1, 10):
        shortest = float(f"{single:.{digits}g}")
        if _single(shortest) == single:
            return shortest
    return single


def trigram_similarity(first: str, second: str) -> float:
    """pg_trgm's similarity(first, second)."""
    a, b = trigrams(first), trigrams(second)
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return as_real(shared / (len(a) + len(b) - shared))


def is_near_copy(similarity: float, threshold: float) -> bool:
    """Both compared as `real`, as the SQL check compares them."""
    return _single(similarity) >= _single(threshold)
