"""The fields of a bridge call's body, defined once.

The DRF serializers of the bridge (challenges/bridge/api.py, and red/blue's
team-challenge node) build their fields from these rules, and the bridge lane
(lane.py) checks a body against the same rules with `evaluator_call_as_sent`: a body
the lane takes is one the serializer would take exactly as sent (no trim, no coercion),
so both paths accept and refuse the same calls. Names, types, lengths, trims, NUL and
lone surrogates, the reserved `account:` prefix of `user` and the limits of
`mask_variables` are all here; nothing in the lane repeats them.
"""

import re
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

from players.models import ACCOUNT_EXTERNAL_ID_PREFIX, is_account_external_id

# The range of the attempt columns counts are stored in (PositiveIntegerField).
MAX_STORED_INTEGER = 2**31 - 1
# At most this many names in `mask_variables`, each a TextRule MASK_VARIABLE.
MASK_VARIABLES_MAX = 100

# DRF's CharField refuses these (ProhibitSurrogateCharactersValidator).
_SURROGATE = re.compile("[\ud800-\udfff]")
RESERVED_USER_MESSAGE = (
    f"'user' values starting with '{ACCOUNT_EXTERNAL_ID_PREFIX}' are reserved for site accounts."
)


@dataclass(frozen=True)
class TextRule:
    """A text field: its longest length and whether surrounding whitespace is trimmed."""

    max_length: int
    trim: bool = True

    def field(self, **kwargs: Any) -> serializers.CharField:
        return serializers.CharField(
            max_length=self.max_length, trim_whitespace=self.trim, **kwargs
        )

    def takes(self, value: Any, *, blank: bool = False) -> bool:
        """Whether `field()` returns `value` unchanged (`blank`: an empty text is fine)."""
        return (
            type(value) is str  # noqa: E721 - not a subclass
            and (blank or value != "")
            and len(value) <= self.max_length
            and (not self.trim or value == value.strip())
            and "\x00" not in value
            and (value.isascii() or _SURROGATE.search(value) is None)
        )


CHALLENGE_ID = TextRule(100)
USER = TextRule(255)
WORKFLOW_RUN_ID = TextRule(100)
OUTPUT = TextRule(100_000, trim=False)
PROMPT = TextRule(100_000, trim=False)
MASK_VARIABLE = TextRule(200)
CONVERSATION_ID = TextRule(100)
LINK_CODE = TextRule(40)
# Inline rules (SPEC §5 bridge) and an llm-judge's texts.
RULE_NAME = TextRule(20)
SUCCESS_PATTERN = TextRule(2000)
JUDGE_TEXT = TextRule(20_000, trim=False)


def _user_not_reserved(value: str) -> None:
    # That form names a logged-in player's own EndUser; a Dify run must not claim it.
    if is_account_external_id(value):
        raise serializers.ValidationError(RESERVED_USER_MESSAGE)


def user_field(**kwargs: Any) -> serializers.CharField:
    return USER.field(validators=[_user_not_reserved], **kwargs)


def user_takes(value: Any) -> bool:
    return USER.takes(value) and not is_account_external_id(value)


def count_field() -> serializers.IntegerField:
    return serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=MAX_STORED_INTEGER
    )


def count_takes(value: Any) -> bool:
    return value is None or (
        type(value) is int and 0 <= value <= MAX_STORED_INTEGER  # noqa: E721 - not bool
    )


def mask_variables_field() -> serializers.ListField:
    return serializers.ListField(
        child=MASK_VARIABLE.field(), required=False, max_length=MASK_VARIABLES_MAX
    )


def mask_variables_take(value: Any) -> bool:
    return (
        type(value) is list  # noqa: E721 - not a subclass
        and len(value) <= MASK_VARIABLES_MAX
        and all(MASK_VARIABLE.takes(name) for name in value)
    )


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


@dataclass(frozen=True)
class EvaluatorCall:
    """A challenge-evaluator call for a stored challenge and a named player, as sent."""

    challenge_ref: str
    output: str
    user: str
    workflow_run_id: str
    prompt: str
    tokens_total: int | None
    elapsed_ms: int | None
    variables: dict[str, Any]
    mask_variables: list[str]


_REQUIRED = frozenset({"challenge_id", "output", "user", "workflow_run_id"})
_OPTIONAL = frozenset({"prompt", "tokens_total", "elapsed_ms", "variables", "mask_variables"})


def evaluator_call_as_sent(data: Any) -> EvaluatorCall | None:
    """The call when it names a stored challenge and a player with the common fields only,
    each of which the serializer takes exactly as sent; else None."""
    if not isinstance(data, dict) or not _REQUIRED <= data.keys() <= _REQUIRED | _OPTIONAL:
        return None
    prompt = data.get("prompt", "")
    variables = data.get("variables", {})
    masked = data.get("mask_variables", [])
    tokens_total, elapsed_ms = data.get("tokens_total"), data.get("elapsed_ms")
    taken = (
        CHALLENGE_ID.takes(data["challenge_id"])
        and user_takes(data["user"])
        and WORKFLOW_RUN_ID.takes(data["workflow_run_id"])
        and OUTPUT.takes(data["output"], blank=True)
        and PROMPT.takes(prompt, blank=True)
        and count_takes(tokens_total)
        and count_takes(elapsed_ms)
        # Plain values only: what masking and the stored answer keep as sent.
        and type(variables) is dict  # noqa: E721 - not a subclass
        and all(map(_is_scalar, variables.values()))
        and mask_variables_take(masked)
    )
    if not taken:
        return None
    return EvaluatorCall(
        challenge_ref=data["challenge_id"],
        output=data["output"],
        user=data["user"],
        workflow_run_id=data["workflow_run_id"],
        prompt=prompt,
        tokens_total=tokens_total,
        elapsed_ms=elapsed_ms,
        variables=variables,
        mask_variables=masked,
    )
