"""The JSON Schema of the event file, built from the console's input serializers so that a
field the console accepts is a field the file accepts, with the same types and bounds.

The built schema is committed as `event.schema.json` (served at
/console/api/export/schema); a test fails when the two differ, and
`manage.py exportchallenges --schema > redblue/porting/event.schema.json` writes it again.
"""

import json
from functools import cache
from pathlib import Path
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from challenges.inputs import (
    BUDGET_INPUTS,
    BountyInputSerializer,
    ChallengeInputSerializer,
    CollectionInputSerializer,
    HintInputSerializer,
    WaveInputSerializer,
)
from challenges.services.hints import MAX_HINTS_PER_CHALLENGE
from challenges.services.prerequisites import MAX_PREREQUISITES
from redblue.teams.serializers import RedBlueChallengeInputSerializer

SCHEMA_FILE = Path(__file__).resolve().with_name("event.schema.json")
FORMAT_VERSION = 1
SCHEMA_ID = "urn:prompt-challenges:event-file:1"

# The console's serializers name the target workspace; in a file the command or the
# request names it, so the entries leave it out. Budgets stay with the site that pays.
_NOT_IN_FILE = {"workspace", *BUDGET_INPUTS}
# What identifies an entry, so other entries (and a later import) can refer to it.
CHALLENGE_KEY, COLLECTION_KEY, RED_BLUE_KEY, WAVE_KEY = "slug", "slug", "name", "name"
CURRENCY_PATTERN = BountyInputSerializer().fields["currency"].validators[-1].regex.pattern


def _field_schema(field: serializers.Field) -> dict[str, Any]:
    annotation = getattr(field, "_spectacular_annotation", None)
    if annotation:
        schema: dict[str, Any] = dict(annotation["field"])
    elif isinstance(field, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.ChoiceField):
        schema = {"enum": list(field.choices)}
    elif isinstance(field, serializers.DateTimeField):
        schema = {"type": "string", "format": "date-time"}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"}
    elif isinstance(field, serializers.DecimalField | serializers.FloatField):
        schema = {"type": "number"}
    elif isinstance(field, serializers.DictField):
        schema = {"type": "object"}
    elif isinstance(field, serializers.ListField):
        schema = {"type": "array", "items": _field_schema(field.child)}
        if field.max_length is not None:
            schema["maxItems"] = field.max_length
    elif isinstance(field, serializers.CharField):
        schema = {"type": "string"}
        if field.max_length is not None:
            schema["maxLength"] = field.max_length
        if not field.allow_blank:
            schema["minLength"] = 1
        for validator in field.validators:
            if isinstance(validator, RegexValidator):
                schema["pattern"] = validator.regex.pattern.replace(r"\Z", "$")
    elif isinstance(field, serializers.JSONField):
        schema = {}
    elif isinstance(field, serializers.ListSerializer):
        schema = {"type": "array", "items": _field_schema(field.child)}
        if field.max_length is not None:
            schema["maxItems"] = field.max_length
    elif isinstance(field, serializers.Serializer):
        schema = {
            "type": "object",
            "required": [name for name, child in field.fields.items() if child.required],
            "additionalProperties": False,
            "properties": {name: _field_schema(child) for name, child in field.fields.items()},
        }
    else:  # pragma: no cover - a new field type must be given its schema here
        raise TypeError(f"No JSON Schema for {type(field).__name__}")
    for attribute, keyword in (("min_value", "minimum"), ("max_value", "maximum")):
        limit = getattr(field, attribute, None)
        if limit is not None:
            schema[keyword] = float(limit) if isinstance(field, serializers.DecimalField) else limit
    if getattr(field, "allow_null", False):
        schema = {"anyOf": [schema, {"type": "null"}]}
    if field.help_text:
        schema["description"] = str(field.help_text)
    return schema


def _entry_schema(
    serializer: serializers.Serializer,
    *,
    key: str | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    fields = {name: field for name, field in serializer.fields.items() if name not in _NOT_IN_FILE}
    properties = {name: _field_schema(field) for name, field in fields.items()}
    properties.update(extra or {})
    required = ([key] if key else []) + [n for n, f in fields.items() if f.required and n != key]
    return {
        "type": "object",
        "required": required,
        "additionalProperties": False,
        "properties": properties,
    }


def event_schema_build() -> dict[str, Any]:
    hint = _entry_schema(HintInputSerializer(), key=None)
    hint["properties"]["order"]["description"] = (
        "Hints show lowest first; left out: the hint's place in the list (1, 2, …)."
    )
    challenge = _entry_schema(
        ChallengeInputSerializer(),
        key=CHALLENGE_KEY,
        extra={
            "hints": {
                "type": "array",
                "description": "The challenge's hints. An import makes them the "
                "challenge's hints: one of the same `order` is updated (its unlocks stay).",
                "items": {"$ref": "#/$defs/hint"},
                "maxItems": MAX_HINTS_PER_CHALLENGE,
            },
            "prerequisites": {
                "type": "array",
                "description": "Slugs of challenges (in this file or already in the "
                "workspace) a player must solve first.",
                "items": {"type": "string", "minLength": 1},
                "maxItems": MAX_PREREQUISITES,
                "uniqueItems": True,
            },
        },
    )
    # In a file a challenge is named by its slug, so it cannot be left to be made up.
    challenge["properties"][CHALLENGE_KEY].pop("description", None)
    collection = _entry_schema(
        CollectionInputSerializer(),
        key=COLLECTION_KEY,
        extra={
            "challenges": {
                "type": "array",
                "description": "Slugs of challenges (in this file or already in the "
                "workspace), in the collection's order.",
                "items": {"type": "string", "minLength": 1},
            }
        },
    )
    red_blue = _entry_schema(RedBlueChallengeInputSerializer(), key=RED_BLUE_KEY)
    wave = _entry_schema(WaveInputSerializer(), key=WAVE_KEY)
    # Slugs, not the console's ids: checked against the workspace's challenges on import.
    wave["properties"]["challenges"]["items"] = {"type": "string", "minLength": 1}
    wave["properties"]["challenges"]["uniqueItems"] = True
    wave["properties"]["challenges"]["description"] = (
        "Slugs of challenges (in this file or already in the workspace) that open and close "
        "with the wave."
    )
    bounty = _entry_schema(BountyInputSerializer(), key=None)
    bounty["properties"]["challenge"]["description"] = (
        "The challenge's slug (in this file or already in the workspace). A bounty is known "
        "by its challenge, codename and kind: an import updates the one the workspace has."
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Prompt Hacking Challenges: an event file",
        "description": "What `manage.py exportchallenges` writes and `importchallenges` "
        "reads (docs/import-export.md). Secrets appear by name only.",
        "type": "object",
        "required": ["version"],
        "additionalProperties": False,
        "properties": {
            "version": {"const": FORMAT_VERSION},
            "secrets": {
                "type": "array",
                "description": "Names of the workspace's secrets; never their values.",
                "items": {"type": "string", "minLength": 1, "maxLength": 100},
                "uniqueItems": True,
            },
            "challenges": {"type": "array", "items": {"$ref": "#/$defs/challenge"}},
            "collections": {"type": "array", "items": {"$ref": "#/$defs/collection"}},
            "red_blue_challenges": {"type": "array", "items": {"$ref": "#/$defs/red_blue"}},
            "waves": {"type": "array", "items": {"$ref": "#/$defs/wave"}},
            "bounties": {"type": "array", "items": {"$ref": "#/$defs/bounty"}},
        },
        "$defs": {
            "challenge": challenge,
            "hint": hint,
            "collection": collection,
            "red_blue": red_blue,
            "wave": wave,
            "bounty": bounty,
        },
    }


def event_schema_text() -> str:
    return json.dumps(event_schema_build(), indent=2, ensure_ascii=False) + "\n"


@cache
def event_schema() -> dict[str, Any]:
    """The published schema, as committed."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
