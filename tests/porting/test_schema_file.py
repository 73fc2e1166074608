"""The published JSON Schema: the committed file is the one the console's serializers
give, it is a valid 2020-12 schema, and every export passes it."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from jsonschema import Draft202012Validator

from redblue.porting.schema import SCHEMA_FILE, event_schema_build, event_schema_text
from tests.porting.conftest import parse

pytestmark = pytest.mark.django_db


def test_the_committed_schema_is_the_built_one():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == event_schema_text(), (
        "A console serializer changed: run "
        "`manage.py exportchallenges --schema > redblue/porting/event.schema.json`"
    )


def test_it_is_a_valid_schema_that_every_export_passes(rich_workspace):
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    out = StringIO()
    call_command("exportchallenges", workspace="demo", stdout=out)

    assert list(Draft202012Validator(schema).iter_errors(parse(out.getvalue()))) == []


def test_the_command_prints_it():
    out = StringIO()
    call_command("exportchallenges", "--schema", stdout=out)

    assert json.loads(out.getvalue()) == event_schema_build()


def test_a_challenge_entry_accepts_exactly_the_consoles_fields():
    from challenges.inputs import BUDGET_INPUTS, ChallengeInputSerializer

    entry = event_schema_build()["$defs"]["challenge"]
    # Budgets are the running site's spending decisions, never carried in a file.
    console = set(ChallengeInputSerializer().fields) - {"workspace"} - BUDGET_INPUTS
    assert set(entry["properties"]) == console | {"hints", "prerequisites"}
    assert entry["properties"]["hints"]["items"] == {"$ref": "#/$defs/hint"}
    assert entry["additionalProperties"] is False
    assert entry["required"] == ["slug", "name"]
