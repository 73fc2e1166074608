"""The one rule for a name shown on boards, wherever it is set (profile, API, sign-up, admin)."""

import re
import unicodedata

from django.core.exceptions import ValidationError

# Shown after the names of players who come through the Dify bridge (templates/challenges/
# _leaderboard.html and collection.html), from the row's source and never from the name's
# text, so a site account cannot pass for one or wear the marker.
DIFY_MARKER = "Dify"

# Embeddings, overrides and isolates (U+202A–202E, U+2066–2069), the LRM/RLM marks and the
# Arabic letter mark: they reorder what readers see, e.g. "Demo Player" drawn from other text.
_BIDI_CONTROLS = frozenset(
    [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    + ["\u200e", "\u200f", "\u061c"]
)
# Letters, digits, punctuation and symbols are visible; separators, controls, format
# characters and marks on their own are not.
_VISIBLE_CATEGORIES = ("L", "N", "P", "S")
# Letters and symbols that draw nothing: the braille blank and the Hangul fillers.
_BLANK_LOOKING = frozenset("\u2800\u3164\u115f\u1160\uffa0")
_ENDS_WITH_MARKER = re.compile(rf"(?:^|[\W_]){DIFY_MARKER.casefold()}\W*$")


def validate_display_name(value: str) -> None:
    if any(char in _BIDI_CONTROLS for char in value):
        raise ValidationError(
            "Remove the text-direction control characters (such as a right-to-left override).",
            code="bidi_control",
        )
    if any(unicodedata.category(char) == "Cc" for char in value if char not in " \t\n\r"):
        raise ValidationError("Remove the control characters.", code="control_character")
    if not any(
        unicodedata.category(char)[0] in _VISIBLE_CATEGORIES and char not in _BLANK_LOOKING
        for char in value
    ):
        raise ValidationError(
            "Use at least one visible letter, digit or symbol.", code="invisible_name"
        )
    if _ENDS_WITH_MARKER.search(unicodedata.normalize("NFKC", value).casefold()):
        raise ValidationError(
            f"A name cannot end with “{DIFY_MARKER}”: boards use it to mark Dify players.",
            code="reserved_marker",
        )


def printable_name(value: str) -> str:
    """A name from outside (a Dify `user`) without the characters the rule above refuses."""
    return "".join(
        char
        for char in value
        if char not in _BIDI_CONTROLS and unicodedata.category(char) not in ("Cc", "Cf")
    ).strip()
