"""The one JSON reader for request bodies: DRF's parser, the bridge's raw-text bodies, the
arena's views, the bridge lane and the admin's JSON fields.

It refuses what the database or the interpreter cannot take, with a 400 a client can act on,
instead of failing later with a 500: nesting deeper than MAX_JSON_DEPTH (measured before
parsing, as the standard library recurses), NUL characters (PostgreSQL stores none in text
or jsonb), NaN and Infinity (not JSON, and jsonb refuses them) and numbers that do not fit:
a float that overflows to infinity (1e400) or an integer beyond PostgreSQL's bigint.
"""

import codecs
import json
import math
import re
from itertools import accumulate
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from core.errors import ApplicationError

MAX_JSON_DEPTH = 64
MIN_JSON_INTEGER, MAX_JSON_INTEGER = -(2**63), 2**63 - 1

# A string runs to its closing quote or, unterminated, to the end: every match attempt
# succeeds, so stripping strings stays linear (a pattern that could fail would be retried
# from every escaped quote: quadratic).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JsonBodyError(ValueError):
    """A body that is not JSON we accept; the message says why, for the client."""


def _refuse_constant(name: str) -> Any:
    raise JsonBodyError(f"{name} is not a JSON value; send a number or null.")


def _does_not_fit(text: str) -> JsonBodyError:
    shown = text if len(text) <= 24 else f"{text[:20]}… ({len(text)} characters)"
    return JsonBodyError(
        f"The number {shown} does not fit: numbers must be finite, and whole numbers "
        f"from {MIN_JSON_INTEGER} to {MAX_JSON_INTEGER}."
    )


def _integer(text: str) -> int:
    # Checked by length first: Python refuses to convert more than 4,300 digits at all.
    value = int(text) if len(text) <= 20 else None
    if value is None or not MIN_JSON_INTEGER <= value <= MAX_JSON_INTEGER:
        raise _does_not_fit(text)
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _does_not_fit(text)
    return value


def _too_deep(text: str) -> bool:
    """Whether the brackets outside strings nest deeper than MAX_JSON_DEPTH, counted
    without recursion (and, for broken JSON, a guess the parser then corrects)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False  # the common case, decided without reading the strings apart
    brackets = _NOT_A_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) > MAX_JSON_DEPTH


def _refuse_nul(data: Any) -> None:
    # Iterative on purpose, like the depth count: no input can exhaust recursion here.
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                raise JsonBodyError("Text may not contain NUL (\\u0000) characters.")
        elif isinstance(value, dict):
            for key, item in value.items():
                if "\x00" in key:
                    raise JsonBodyError("Keys may not contain NUL (\\u0000) characters.")
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)


def json_loads(raw: bytes | str) -> Any:
    """`raw` as JSON, or JsonBodyError with a message fit for the client."""
    try:
        text = raw if isinstance(raw, str) else raw.decode(json.detect_encoding(raw))
    except UnicodeDecodeError:
        raise JsonBodyError("This is not valid JSON: the text is not UTF-8.") from None
    if _too_deep(text):
        raise JsonBodyError(f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.")
    try:
        data = json.loads(
            text, parse_constant=_refuse_constant, parse_int=_integer, parse_float=_float
        )
    except json.JSONDecodeError as exc:
        raise JsonBodyError(
            f"This is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from None
    _refuse_nul(data)
    return data


class CheckedJSONDecoder(json.JSONDecoder):
    """json_loads' limits for Django form JSON fields (`decoder=`), such as the admin's:
    they report a JSONDecodeError as an invalid value and nothing else."""

    def decode(self, s: str, *args: Any) -> Any:
        try:
            return json_loads(s)
        except JsonBodyError as exc:
            raise json.JSONDecodeError(str(exc), s, 0) from None


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser with json_loads' limits; every API view uses it (settings)."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
        except (UnicodeDecodeError, LookupError):
            raise ParseError("The body is not valid UTF-8 text.") from None
        try:
            return json_loads(text)
        except JsonBodyError as exc:
            raise ParseError(str(exc)) from None


def json_object_or_error(raw: bytes, *, help_text: str = "") -> dict:
    """A body that must be one JSON object; ApplicationError (400, invalid_json) otherwise."""
    suffix = f" {help_text}" if help_text else ""
    try:
        data = json_loads(raw) if raw.strip() else None
    except JsonBodyError as exc:
        raise ApplicationError(f"{exc}{suffix}", code="invalid_json") from None
    if not isinstance(data, dict):
        raise ApplicationError(f"The body must be one JSON object.{suffix}", code="invalid_json")
    return data
