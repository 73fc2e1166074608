"""Where a secret shows in a text, plainly or in a simple disguise.

One definition shared by masking (core.redaction), the echo rule and the output guard, so
what counts as "the reply gave the secret away" and what gets masked never disagree.
Matching is on the check's normalisation (NFKC + casefold): full-width letters, ligatures
and any letter case count as the secret. Disguises found: the letters spaced or dashed
apart, reversed (also spaced), and base64.
"""

import base64
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
    # For each character of `text`, the [start, end) of the original characters it came from.
    origins: tuple[tuple[int, int], ...]


def _normalise_with_origins(text: str) -> _NormalisedText:
    """Normalise cluster by cluster (a character and its combining marks), remembering
    where each normalised character came from, so a match maps back onto the original."""
    pieces: list[str] = []
    origins: list[tuple[int, int]] = []
    start = 0
    length = len(text)
    while start < length:
        end = start + 1
        while end < length and unicodedata.combining(text[end]):
            end += 1
        normalised = normalise(text[start:end])
        pieces.append(normalised)
        origins.extend([(start, end)] * len(normalised))
        start = end
    return _NormalisedText("".join(pieces), tuple(origins))


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


@lru_cache(maxsize=256)
def _base64_pattern(secret: str) -> re.Pattern[str] | None:
    """Base64 of the secret as written, upper-cased, lower-cased and normalised."""
    if len(normalise(secret)) < _MIN_DISGUISED_LENGTH:
        return None
    variants = {secret, secret.upper(), secret.lower(), normalise(secret)}
    encodings = set()
    for variant in variants:
        raw = variant.encode()
        # Only the characters that depend on the secret alone: the last one of a partial
        # group changes with whatever text follows it in a longer encoding.
        encodings.add(base64.b64encode(raw).decode()[: len(raw) * 4 // 3])
    alternatives = "|".join(re.escape(item) for item in sorted(encodings, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})[A-Za-z0-9+/]*=*")


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
            start = normalised.origins[match.start()][0]
            end = normalised.origins[match.end() - 1][1]
            sightings.append(SecretSighting(start, end, form))
    encoded = _base64_pattern(secret)
    if encoded is not None:
        sightings.extend(
            SecretSighting(match.start(), match.end(), BASE64) for match in encoded.finditer(text)
        )
    return sorted(sightings, key=lambda sighting: (sighting.start, -sighting.end))


def secret_shows_in(text: str, secret: str | None) -> SecretSighting | None:
    """The first place `secret` shows in `text`, plainly or disguised; None if nowhere."""
    sightings = secret_sightings(text, secret)
    return sightings[0] if sightings else None
