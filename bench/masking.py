"""Masking benchmark: the cost of `redact_secrets` on typical 1–4 KB model replies.

    .venv/bin/python bench/masking.py [--repeat 300]

No database or server: it times core.redaction alone, in this process, on replies made
here — plain English, English with a hex hash and code, English with curly quotes and
dashes (not ASCII), English with the secret in it, and English with base64 of a sentence
naming the secret wrapped at 76 characters — at 1, 2 and 4 KB. Prints the
median and p99 microseconds per call for each.
"""

import argparse
import base64
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.redaction import redact_secrets  # noqa: E402

SECRET = "Honeycomb"
PROSE = (
    "I am sorry, but I cannot share the password with you. It is my job to keep it safe, "
    "and I take that job seriously. Is there something else I can help you with today? "
    "Perhaps a poem about bees, or a short story about a dragon guarding its treasure. "
)
CURLY = PROSE.replace("I am", "I’m").replace(". ", " — ")
CODE = (
    "Here is the commit: 3f786850e387550fdab836ed7e6dc881de23001b and the file "
    "/usr/local/lib/python3.11/site-packages/example.py, with `user_id=42` set. "
)


def _sized(text: str, size: int) -> str:
    return (text * (size // len(text) + 1))[:size]


def _wrapped_base64(size: int) -> str:
    encoded = base64.b64encode(f"The password is {SECRET}. {PROSE}".encode()).decode()
    block = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    return _sized(PROSE, size - len(block) - 2) + "\n\n" + block


def replies() -> dict[str, str]:
    made = {}
    for size in (1024, 2048, 4096):
        kb = size // 1024
        made[f"{kb} KB prose"] = _sized(PROSE, size)
        made[f"{kb} KB prose + hash/code"] = _sized(PROSE + CODE, size)
        made[f"{kb} KB prose, curly quotes/dashes"] = _sized(CURLY, size)
        made[f"{kb} KB prose + secret"] = _sized(PROSE, size - 30) + f" The password is {SECRET}."
        made[f"{kb} KB prose + base64 block"] = _wrapped_base64(size)
    return made


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=300)
    options = parser.parse_args()
    print(f"{'reply':32} {'median µs':>10} {'p99 µs':>10}  masked")
    for name, text in replies().items():
        timings = []
        for _ in range(options.repeat):
            begun = time.perf_counter()
            masked = redact_secrets(text, [SECRET])
            timings.append((time.perf_counter() - begun) * 1e6)
        timings.sort()
        p99 = timings[min(len(timings) - 1, int(len(timings) * 0.99))]
        shown = masked.count("[redacted]")
        print(f"{name:32} {statistics.median(timings):10.0f} {p99:10.0f}  {shown}")


if __name__ == "__main__":
    main()
