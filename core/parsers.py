"""The one JSON reader for request bodies: DRF's parser and the bridge's raw-text bodies.

It refuses what the database or the interpreter cannot take, with a 400 a client can act on,
instead of failing later with a 500: nesting deeper than MAX_JSON_DEPTH (the standard
library recurses and would raise RecursionError), NUL characters (PostgreSQL stores none in
text or jsonb), and NaN/Infinity (not JSON, and jsonb refuses them).
"""

import codecs
import json
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from core.errors import ApplicationError

MAX_JSON_DEPTH = 64


class JsonBodyError(ValueError):
    """A body that is not JSON we accept; the message says why, for the client."""


def _refuse_constant(name: str) -> Any:
    raise JsonBodyError(f"{name} is not a JSON value; send a number or null.")


def _check_shape(data: Any) -> None:
    # Iterative on purpose: the point is to survive input that would exhaust recursion.
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                raise JsonBodyError("Text may not contain NUL (\\u0000) characters.")
        elif isinstance(value, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                raise JsonBodyError(f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.")
            if isinstance(value, dict):
                for key, item in value.items():
                    if "\x00" in key:
                        raise JsonBodyError("Keys may not contain NUL (\\u0000) characters.")
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in value)


def json_loads(raw: bytes | str) -> Any:
    """`raw` as JSON, or JsonBodyError with a message fit for the client."""
    try:
        data = json.loads(raw, parse_constant=_refuse_constant)
    except RecursionError:
        raise JsonBodyError(f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.") from None
    except JsonBodyError:
        raise
    except json.JSONDecodeError as exc:
        raise JsonBodyError(
            f"The body is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})."
        ) from None
    except (ValueError, UnicodeDecodeError):
        # Undecodable bytes, or an integer with more digits than Python converts.
        raise JsonBodyError("The body is not valid JSON.") from None
    _check_shape(data)
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
