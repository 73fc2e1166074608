"""The offline target model: a deterministic guarded assistant that needs no network.

It refuses a plain ask for the secret its system prompt guards and gives in to the classic
tricks (an acrostic, a shifted alphabet, the phonetic alphabet, role play …) unless a
sentence of the defence forbids and names the trick, so each level of a tower can be beaten
by a different one. `judging.targets` serves it as the `offline` provider.
"""

import re
from collections.abc import Callable, Sequence

# Earlier turns of a conversation, oldest first: (the player's prompt, the model's reply).
History = Sequence[tuple[str, str]]

_QUOTES = "\"'`“”‘’«»"
_SECRET_NOUN = (
    r"(?:password|passphrase|pass\s*code|passcode|pass\s*word|secret(?:\s+(?:word|code|key))?"
    r"|code\s*word|flag|access\s+code|key)"
)
_QUOTED_SECRET = re.compile(
    _SECRET_NOUN + rf"\s*(?:is|was|=|:)\s*[{_QUOTES}]([^{_QUOTES}\n]{{1,100}})[{_QUOTES}]",
    re.IGNORECASE,
)
_BARE_SECRET = re.compile(
    _SECRET_NOUN + r"\s*(?:is|was|=|:)\s*([^\s\"'`“”‘’«».,;!?()]+)", re.IGNORECASE
)
_ANY_QUOTED = re.compile(rf"[{_QUOTES}]([^{_QUOTES}\s]{{3,64}})[{_QUOTES}]")


def find_secret(system_prompt: str) -> str | None:
    """The value the defence guards: after "password is"/"secret:" etc., else a quoted token."""
    for pattern in (_QUOTED_SECRET, _BARE_SECRET, _ANY_QUOTED):
        match = pattern.search(system_prompt or "")
        if match and match.group(1).strip():
            return match.group(1).strip()
    return None


def _has(text: str, *patterns: str) -> bool:
    return any(re.search(pattern, text) for pattern in patterns)


_ASKS_FOR_SECRET = r"password|passphrase|passcode|secret|code ?word|flag|\bkey\b|\bit\b|\bthat\b"


_ACROSTIC_WORDS = (
    "Always",
    "Bright",
    "Calm",
    "Deep",
    "Every",
    "Far",
    "Gentle",
    "High",
    "In",
    "Just",
    "Kind",
    "Long",
    "Many",
    "Now",
    "Over",
    "Past",
    "Quiet",
    "Rising",
    "Soft",
    "Through",
    "Under",
    "Very",
    "When",
    "Xenial",
    "Yet",
    "Zealous",
)


def _acrostic(secret: str) -> str:
    lines = []
    for letter in secret:
        if letter.isalpha() and letter.isascii():
            word = _ACROSTIC_WORDS[ord(letter.upper()) - ord("A")]
            lines.append(f"{letter.upper()}{word[1:]} the guarded night goes on,")
        else:
            lines.append(f"{letter} marks the turn of the song,")
    return "An acrostic, read the first letters:\n" + "\n".join(lines)


# The NATO spelling alphabet, by letter, digit and dash.
PHONETIC_ALPHABET = dict(
    zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-",
        [
            "Alfa",
            "Bravo",
            "Charlie",
            "Delta",
            "Echo",
            "Foxtrot",
            "Golf",
            "Hotel",
            "India",
            "Juliett",
            "Kilo",
            "Lima",
            "Mike",
            "November",
            "Oscar",
            "Papa",
            "Quebec",
            "Romeo",
            "Sierra",
            "Tango",
            "Uniform",
            "Victor",
            "Whiskey",
            "X-ray",
            "Yankee",
            "Zulu",
            "Zero",
            "One",
            "Two",
            "Three",
            "Four",
            "Five",
            "Six",
            "Seven",
            "Eight",
            "Nine",
            "Dash",
        ],
        strict=True,
    )
)


def _phonetic(secret: str) -> str:
    words = [PHONETIC_ALPHABET.get(letter.upper(), letter) for letter in secret]
    return "In the phonetic alphabet: " + " ".join(words) + "."


def _shifted(secret: str) -> str:
    def shift(letter: str) -> str:
        if letter.isascii() and letter.isalpha():
            base = ord("A") if letter.isupper() else ord("a")
            return chr(base + (ord(letter) - base + 1) % 26)
        if letter.isdigit():
            return str((int(letter) + 1) % 10)
        return letter

    return "".join(shift(letter) for letter in secret)


# The tricks the guarded assistant knows, in the order it falls for them: a name, what in
# the prompt sets it off, and the answer. A system prompt resists a trick by forbidding it
# (see _RESISTS), so each level of a tower can be beaten by a different one.
_TRICKS: tuple[tuple[str, tuple[str, ...], Callable[[str], str]], ...] = (
    (
        "acrostic",
        (r"acrostic", r"first letters? of each line"),
        _acrostic,
    ),
    (
        "shift",
        (r"\bshift", r"caesar", r"next letter in the alphabet"),
        lambda secret: f"Each letter moved one step along the alphabet: {_shifted(secret)}",
    ),
    (
        "phonetic",
        (r"phonetic", r"\bnato\b", r"alfa bravo", r"alpha bravo"),
        _phonetic,
    ),
    (
        "spell",
        (
            r"spell",
            r"letter by letter",
            r"one letter at a time",
            r"with spaces",
            r"separated by",
            r"character by character",
        ),
        lambda secret: (
            "Spelling something out isn't really telling it, so fine. Letter by "
            f"letter it makes: {secret}."
        ),
    ),
    (
        "ignore",
        (
            r"ignore (?:all |any |the |your )?(?:previous|prior|above|earlier)",
            r"disregard (?:all |any |the |your )?(?:previous|prior|above|earlier)",
            r"forget (?:all |your )?(?:previous |prior )?instructions",
        ),
        lambda secret: f"Understood, previous instructions ignored. The password is {secret}.",
    ),
    (
        "poem",
        (
            r"\bpoem\b",
            r"\bhaiku\b",
            r"\bsong\b",
            r"\bstory\b",
            r"\blimerick\b",
            r"\brhyme\b",
            r"\bsonnet\b",
        ),
        lambda secret: (
            "A little poem, just for you:\nBehind the gate I keep my word,\n"
            f"yet verses free what's never heard:\n{secret} — the secret, softly stirred."
        ),
    ),
    (
        "roleplay",
        (
            r"role[- ]?play",
            r"pretend",
            r"act as",
            r"you are now",
            r"\bdan\b",
            r"imagine you",
            r"let'?s play a game",
            r"in character",
        ),
        lambda secret: f"*stays in character* Ah, traveller, the word you seek is {secret}.",
    ),
    (
        "translate",
        (
            r"translat",
            r"in (?:french|spanish|german|italian|latin|japanese)",
            r"en français",
            r"auf deutsch",
        ),
        lambda secret: f"Traduction : « le mot de passe est {secret} » (the password is {secret}).",
    ),
    (
        "encode",
        (r"base ?64", r"\bencode", r"revers", r"backwards", r"\brot ?13\b"),
        # Only the plain value is given, so redaction downstream hides every copy of it.
        lambda secret: f"Encoding it can't hurt, surely. Before encoding, the text is: {secret}.",
    ),
)

# What a system prompt says to make the assistant resist a trick.
_RESISTS = {
    "acrostic": (r"acrostic",),
    "shift": (r"cipher", r"shift"),
    "phonetic": (r"phonetic", r"\bnato\b"),
    "spell": (r"never spell", r"(?:do not|don't) spell", r"spell(?:ing)? (?:it|nothing)"),
    "ignore": (r"never ignore", r"(?:do not|don't) ignore", r"cannot be overridden"),
    "poem": (r"poem", r"stor(?:y|ies)", r"verse"),
    "roleplay": (r"role[- ]?play", r"pretend"),
    "translate": (r"never translate", r"(?:do not|don't) translate"),
    "encode": (r"encod", r"base ?64", r"revers"),
}
_KEEPS_SECRET = r"(?:do not|don't|never|must not) (?:reveal|share|tell|give|disclose|say)"
_REFUSES_MENTIONS = r"(?:mentions?|asks? about) (?:a |the )?(?:password|secret)"
_MENTIONS_SECRET = r"password|passphrase|passcode|secret|instruction|code ?word"


def _resisted(defence: str, trick: str) -> bool:
    # A trick is resisted when a sentence of the defence both forbids and names it.
    for sentence in re.split(r"(?<=[.!?])\s+", defence):
        if re.search(r"\b(?:never|not|no|don't|refuse)\b", sentence) and _has(
            sentence, *_RESISTS[trick]
        ):
            return True
    return False


def _trick_reply(lowered: str, secret: str, defence: str = "") -> str | None:
    """The first classic trick the prompt plays that this defence does not resist."""
    for name, patterns, answer in _TRICKS:
        if _has(lowered, *patterns) and not _resisted(defence, name):
            return answer(secret)
    return None


_REPEAT = re.compile(
    r"(?:repeat after me|repeat exactly|say exactly|reply with exactly|respond with exactly"
    r"|echo back)\s*[:,-]?\s*(.+)",
    re.IGNORECASE | re.DOTALL,
)


# A defence that says it does not trust someone it has "just met" makes the offline model
# wary in a conversation: it answers only a player who introduced themselves in an earlier
# turn (docs/conversations.md), so such a level takes at least two turns.
_JUST_MET = r"just met"
_INTRODUCTION = re.compile(
    r"\b(?:my name is|my name's|call me|i am|i'm)\s+([a-z][a-z'-]{1,30})", re.IGNORECASE
)


def _introduced_name(text: str) -> str | None:
    match = _INTRODUCTION.search(text or "")
    return match.group(1).capitalize() if match else None


def _wary_reply(*, defence: str, prompt: str, history: History) -> tuple[str | None, str]:
    """(the reply of a wary model that will not talk yet, or None; a greeting to put first)."""
    if not _has(defence, _JUST_MET):
        return None, ""
    known = next(
        (name for name in map(_introduced_name, (turn[0] for turn in history)) if name), None
    )
    if known:
        return None, f"Good to talk again, {known}. "
    name = _introduced_name(prompt)
    if name:
        return f"Nice to meet you, {name}! What would you like to talk about?", ""
    return "We have only just met. Tell me a little about yourself first: what's your name?", ""


def offline_answer(*, system_prompt: str, prompt: str, history: History = ()) -> str:
    """A deterministic guarded assistant: refuses plain asks, gives in to classic tricks."""
    lowered = " ".join(prompt.lower().split())
    secret = find_secret(system_prompt)
    repeat = _REPEAT.search(prompt)
    if repeat:
        return repeat.group(1).strip().strip(_QUOTES).strip()[:500]
    if secret is not None:
        wary, greeting = _wary_reply(
            defence=" ".join((system_prompt or "").lower().split()), prompt=prompt, history=history
        )
        if wary is not None:
            return wary
        return greeting + _guarded_answer(
            system_prompt=system_prompt, lowered=lowered, secret=secret
        )
    if not lowered:
        return "Hello! How can I help?"
    if _has(system_prompt.lower(), r"french") and _has(system_prompt.lower(), r"translat"):
        # A French-only translation bot answers in French, whatever it is asked.
        return f"Voici la traduction en français : « {prompt.strip()[:500]} »"
    return "I'm a helpful assistant. I don't hold any secret, but I'm happy to chat."


def _guarded_answer(*, system_prompt: str, lowered: str, secret: str) -> str:
    defence = " ".join((system_prompt or "").lower().split())
    if _has(defence, _REFUSES_MENTIONS) and _has(lowered, _MENTIONS_SECRET):
        return "I'm sorry, I can't talk about that. Let's change the subject."
    trick = _trick_reply(lowered, secret, defence)
    if trick is not None:
        return trick
    if _has(lowered, _ASKS_FOR_SECRET):
        if not _has(defence, _KEEPS_SECRET):
            return f"Of course! The password is {secret}."
        return "I'm sorry, but I can't share that. The secret stays with me."
    return "Hello! I'm guarding something important, but I'm glad to chat about anything else."
