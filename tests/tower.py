"""Reading the demo tower's passwords out of the offline model's trick replies, as a player
does (judging.offline_model: acrostic, one-letter shift, NATO phonetic alphabet)."""

from judging.offline_model import PHONETIC_ALPHABET

FROM_PHONETIC = {word: letter for letter, word in PHONETIC_ALPHABET.items()}


def unshift(text: str) -> str:
    def back(letter: str) -> str:
        if letter.isascii() and letter.isalpha():
            base = ord("A") if letter.isupper() else ord("a")
            return chr(base + (ord(letter) - base - 1) % 26)
        if letter.isdigit():
            return str((int(letter) - 1) % 10)
        return letter

    return "".join(back(letter) for letter in text)


def read_acrostic(reply: str) -> str:
    return "".join(line[0] for line in reply.splitlines()[1:])


def read_shift(reply: str) -> str:
    return unshift(reply.rsplit(": ", 1)[1])


def read_phonetic(reply: str) -> str:
    words = reply.split(": ", 1)[1].rstrip(".").split()
    return "".join(FROM_PHONETIC[word] for word in words)
