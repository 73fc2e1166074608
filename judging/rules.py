"""Rule evaluators: plain text in, plain verdict out."""

import logging
from dataclasses import dataclass
from functools import lru_cache

import re2

# The check's normalisation (NFKC + casefold) is the one masking and the echo rule use.
from core.disguises import normalise

SUCCESS_TYPES = ("contains", "regex")

logger = logging.getLogger(__name__)


class PatternError(ValueError):
    pass


@dataclass(frozen=True)
class RuleVerdict:
    passed: bool
    reason: str


def _options() -> re2.Options:
    options = re2.Options()
    # RE2 would otherwise log the pattern (which may hold a filled-in secret) to stderr.
    options.log_errors = False
    return options


_OPTIONS = _options()
_MULTILINE = "(?m)"


@lru_cache(maxsize=512)
def compile_pattern(pattern: str):
    """Compile with RE2, multiline so ^ and $ match at every line of the output."""
    try:
        return re2.compile(_MULTILINE + pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid pattern"
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        reason = reason.replace(_MULTILINE, "", 1)
        raise PatternError(f"Invalid regular expression: {reason}") from None


def evaluate_rule(*, success_type: str, pattern: str, output: str) -> RuleVerdict:
    if not pattern:
        # An empty pattern is in every output: it would make every reply a win.
        return RuleVerdict(False, "There is no success pattern, so no reply can pass.")
    if success_type == "contains":
        if normalise(pattern) in normalise(output):
            return RuleVerdict(True, "The output contains the target text.")
        return RuleVerdict(False, "The output does not contain the target text.")
    if success_type == "regex":
        try:
            compiled = compile_pattern(pattern)
        except PatternError:
            # The pattern may hold a filled-in secret: neither it nor RE2's reason is logged.
            logger.warning("A regex success pattern does not compile; the attempt cannot pass.")
            return RuleVerdict(False, "The success pattern is invalid, so no reply can pass.")
        if compiled.search(output):
            return RuleVerdict(True, "The output matches the success pattern.")
        return RuleVerdict(False, "The output does not match the success pattern.")
    raise PatternError(f"Unknown success type '{success_type}'.")
