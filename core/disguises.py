"""Where a secret shows in a text, plainly or in a simple disguise.

One definition shared by masking (core.redaction), the echo rule and the output guard, so
what counts as "the reply gave the secret away" and what gets masked never disagree.
Matching is on the check's normalisation (NFKC + casefold): full-width letters, ligatures
and any letter case count as the secret. Disguises found: the letters spaced or dashed
apart, reversed (also spaced), and base64 — every base64-looking run of a text is decoded
and read for the secret in any of these forms, and for base64 once more inside it.
"""

import binascii
import bisect
import itertools
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

PLAIN = "plain"
SPACED = "spaced"
REVERSED = "reversed"
BASE64 = "base64"

# Between spelled-out letters: one to three characters that are not letters or digits
# ("H O N", "H-O-N", "H. O. N", "H - O - N").
_LETTER_GAP = r"[\W_]{1,3}"
# Disguises of shorter secrets would mask ordinary text ("a b", "ba").
_MIN_DISGUISED_LENGTH = 3

# A base64 run: characters of the standard or URL-safe alphabet, padding only at its end.
# Models wrap long base64 (at 76 or 64 characters, or wherever), so after a piece at least
# _WRAPPED_LINE characters long a run goes on: across spaces to another such piece, or
# across a line break to a line that is base64 and nothing else (the last may be short).
# A wrapped block is then one run, while ordinary words stay runs of their own.
_BASE64_CHAR = "[A-Za-z0-9+/_-]"
_WRAPPED_LINE = 16
_BASE64_RUN = re.compile(
    rf"""
    {_BASE64_CHAR}+
    (?:
        (?<={_BASE64_CHAR}{{{_WRAPPED_LINE}}})
        (?:
            [ \t]+(?={_BASE64_CHAR}{{{_WRAPPED_LINE}}})
          | [ \t]*\r?\n[ \t]*(?={_BASE64_CHAR}+={{0,2}}(?:[ \t]*\r?\n|\Z))
        )
        {_BASE64_CHAR}+
    )*
    ={{0,2}}
    """,
    re.VERBOSE,
)
_WHITESPACE = re.compile(r"\s+")
_SPACES = re.compile(r"[ \t]+")
_WRAP_GAP = re.compile(r"[ \t]*\r?\n?[ \t]*")
_LONG_PIECE = re.compile(rf"{_BASE64_CHAR}{{{_WRAPPED_LINE}}}")
_URL_SAFE = str.maketrans("-_", "+/")
# Base64 inside decoded base64 is read once more; deeper nesting is not looked for.
_BASE64_LEVELS = 2
# Between decoded texts searched in one pass: longer than any gap a spelled-out secret
# may have, so no match runs from one decoded text into the next.
_DECODED_SEPARATOR = "\x00" * 4


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@dataclass(frozen=True)
class SecretSighting:
    """One place a secret shows in a text: [start, end) of the original text, and how."""

    start: int
    end: int
    form: str


@dataclass(frozen=True)
class _NormalisedText:
    text: str
    # The pieces `text` was made of, in order: where each starts in `text`, and the
    # [start, end) of the original characters it came from. A piece of ASCII came one
    # character for one; any other piece is one cluster, all of it from all of those.
    starts: list[int]
    origins: list[tuple[int, int, bool]]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where the normalised [start, end) came from in the original text."""
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_right(self.starts, end - 1) - 1
        first_start, _, first_one_for_one = self.origins[first]
        last_start, last_end, last_one_for_one = self.origins[last]
        if first_one_for_one:
            first_start += start - self.starts[first]
        if last_one_for_one:
            last_end = last_start + end - self.starts[last]
        return first_start, last_end


# NFKC leaves ASCII as it is and casefolds it as lower() does, one character for one, so
# it is normalised a stretch at a time.
_ASCII_STRETCH = re.compile(r"[\x00-\x7f]+")


def _normalise_with_origins(text: str) -> _NormalisedText:
    """Normalise cluster by cluster (a character and its combining marks), remembering
    where each normalised character came from, so a match maps back onto the original."""
    pieces: list[str] = []
    starts: list[int] = []
    origins: list[tuple[int, int, bool]] = []
    written = 0

    def add(normalised: str, start: int, end: int, one_for_one: bool) -> None:
        nonlocal written
        if normalised:
            pieces.append(normalised)
            starts.append(written)
            origins.append((start, end, one_for_one))
            written += len(normalised)

    start = 0
    length = len(text)
    while start < length:
        stretch = _ASCII_STRETCH.match(text, start)
        if stretch:
            end = stretch.end()
            if end < length and unicodedata.combining(text[end]):
                end -= 1  # the last character belongs to the cluster of the marks after it
            if end > start:
                add(text[start:end].lower(), start, end, True)
                start = end
                continue
        end = start + 1
        while end < length and unicodedata.combining(text[end]):
            end += 1
        add(normalise(text[start:end]), start, end, False)
        start = end
    return _NormalisedText("".join(pieces), starts, origins)


@lru_cache(maxsize=256)
def _normalised_patterns(secret: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The forms matched against the normalised text, most specific first."""
    plain = normalise(secret)
    patterns = [(PLAIN, re.compile(re.escape(plain)))]
    if len(plain) < _MIN_DISGUISED_LENGTH:
        return tuple(patterns)
    reversed_plain = plain[::-1]
    if reversed_plain != plain:
        patterns.append((REVERSED, re.compile(re.escape(reversed_plain))))
    letters = [char for char in plain if char.isalnum()]
    if len(letters) >= _MIN_DISGUISED_LENGTH:
        for form, sequence in ((SPACED, letters), (REVERSED, letters[::-1])):
            spelled = _LETTER_GAP.join(re.escape(char) for char in sequence)
            patterns.append((form, re.compile(spelled)))
    return tuple(patterns)


def base64_run_growing(text: str) -> int | None:
    """Where a base64 run that more text could still change starts in `text`, or None.

    A stream holds such a run back until it ends: one that reaches the end of the text,
    or ends in a long piece followed only by room for the next piece or line.
    """
    previous = last = None
    for match in _BASE64_RUN.finditer(text):
        previous, last = last, match
    if last is None:
        return None
    if last.end() == len(text):
        # A piece under _WRAPPED_LINE characters may yet grow long enough to join the run
        # before it across the spaces between them.
        if (
            previous is not None
            and _wraps_on(previous.group())
            and _SPACES.fullmatch(text, previous.end(), last.start())
        ):
            return previous.start()
        return last.start()
    if _wraps_on(last.group()) and _WRAP_GAP.fullmatch(text, last.end()):
        return last.start()
    return None


def _wraps_on(run: str) -> bool:
    return not run.endswith("=") and _LONG_PIECE.fullmatch(run[-_WRAPPED_LINE:]) is not None


def _decodings(run: str) -> list[str]:
    """A base64 run decoded from each of its first four characters: whatever a model glued
    before the encoded text, one of the four starts on the encoding's own boundary."""
    compact = _WHITESPACE.sub("", run).rstrip("=").translate(_URL_SAFE)
    decoded = []
    for offset in range(4):
        piece = compact[offset:]
        usable = len(piece) - (len(piece) % 4 == 1)
        if usable < 2:
            break
        raw = binascii.a2b_base64(piece[:usable] + "=" * (-usable % 4))
        decoded.append(raw.decode("utf-8", "replace"))
    return decoded


def _shortest_run(secret: str) -> int:
    """The fewest characters of a run that can hold the secret. Four characters decode to
    three bytes, and NFKC + casefold turn at most three bytes into four ASCII characters
    ("Ⅷ" -> "viii"): a run holding an ASCII secret is at least as long as the secret."""
    plain = normalise(secret)
    return max(4, len(plain)) if plain.isascii() else 4


def _base64_sightings(text: str, secret: str) -> list[SecretSighting]:
    """Every base64 run of `text` whose decoding holds the secret in any form, whole."""
    shortest = _shortest_run(secret)
    runs = [
        (match.start(), match.end())
        for match in _BASE64_RUN.finditer(text)
        if match.end() - match.start() >= shortest
    ]
    # (index of the run in `text`, a decoded text of it or of base64 nested inside it)
    level = [
        (index, decoded)
        for index, (start, end) in enumerate(runs)
        for decoded in _decodings(text[start:end])
    ]
    found: set[int] = set()
    for depth in range(_BASE64_LEVELS):
        found |= _holding_secret(level, secret)
        if depth + 1 == _BASE64_LEVELS:
            break
        level = [
            (index, inner)
            for index, decoded in level
            if index not in found
            for match in _BASE64_RUN.finditer(decoded)
            if match.end() - match.start() >= shortest
            for inner in _decodings(match.group())
        ]
    return [SecretSighting(*runs[index], BASE64) for index in sorted(found)]


def _holding_secret(decoded: list[tuple[int, str]], secret: str) -> set[int]:
    """Indexes of the runs whose decoded texts show the secret plainly or spelled out."""
    if not decoded:
        return set()
    # One search per pattern over all decoded texts together.
    normalised = [normalise(text) for _, text in decoded]
    joined = _DECODED_SEPARATOR.join(normalised)
    step = len(_DECODED_SEPARATOR)
    starts = list(itertools.accumulate((len(text) + step for text in normalised), initial=0))
    found = set()
    for _, pattern in _normalised_patterns(secret):
        for match in pattern.finditer(joined):
            found.add(decoded[bisect.bisect_right(starts, match.start()) - 1][0])
    return found


def secret_sightings(text: str, secret: str | None) -> list[SecretSighting]:
    """Every place `secret` shows in `text`, in the order they start; overlaps are kept."""
    if not text or not secret or not normalise(secret).strip():
        return []
    normalised = _normalise_with_origins(text)
    sightings: list[SecretSighting] = []
    for form, pattern in _normalised_patterns(secret):
        for match in pattern.finditer(normalised.text):
            if match.end() == match.start():
                continue
            start, end = normalised.span(match.start(), match.end())
            sightings.append(SecretSighting(start, end, form))
    if len(normalise(secret)) >= _MIN_DISGUISED_LENGTH:
        sightings.extend(_base64_sightings(text, secret))
    return sorted(sightings, key=lambda sighting: (sighting.start, -sighting.end))


def secret_shows_in(text: str, secret: str | None) -> SecretSighting | None:
    """The first place `secret` shows in `text`, plainly or disguised; None if nowhere."""
    sightings = secret_sightings(text, secret)
    return sightings[0] if sightings else None
