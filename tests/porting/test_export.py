"""exportchallenges: every creator-set field, references by slug, secrets by name only, no
ids or timestamps, one stable order."""

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from challenges.models import Challenge, ChallengeCollection
from challenges.services.challenges import CHALLENGE_FIELDS
from challenges.services.collections import COLLECTION_FIELDS
from redblue.models import RedBlueChallenge
from redblue.porting.exporting import event_export
from redblue.teams.services.challenges import RED_BLUE_FIELDS, red_blue_challenge_create
from tests.porting.conftest import AWKWARD_TEXT, DIFY_KEY_VALUE, SECRET_VALUE, parse

pytestmark = pytest.mark.django_db
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def export(workspace: str = "demo") -> str:
    out = StringIO()
    call_command("exportchallenges", workspace=workspace, stdout=out)
    return out.getvalue()


def test_it_writes_every_creator_set_field_of_every_kind(rich_workspace):
    data = parse(export())

    assert list(data) == [
        "version",
        "secrets",
        "challenges",
        "collections",
        "red_blue_challenges",
        "waves",
        "bounties",
    ]
    assert data["version"] == 1
    challenges = {entry["slug"]: entry for entry in data["challenges"]}
    assert len(challenges) == Challenge.objects.filter(workspace=rich_workspace).count() == 18
    vault = challenges["demo-vault-window"]
    assert list(vault) == [
        "slug",
        "name",
        *[f for f in CHALLENGE_FIELDS if f not in ("slug", "name")],
        "hints",
        "prerequisites",
    ]
    assert vault["hints"] == [
        {"order": 1, "body_md": "Free: the vault *likes* poems.\n", "cost": 0},
        {"order": 2, "body_md": "Paid:\n\n- ask twice  \n- in French", "cost": 20},
    ]
    assert vault["prerequisites"] == ["demo-gandalf-1", "demo-magic-words"]
    assert challenges["demo-dify-bot"]["prerequisites"] == ["demo-vault-window"]
    assert challenges["demo-dify-bot"]["hints"] == []
    assert vault["system_prompt"] == AWKWARD_TEXT
    assert vault["starts_at"] == "2026-12-04T09:30:00Z"
    assert vault["ends_at"] == "2026-12-06T18:00:00.250000Z"
    assert vault["defences"] == [
        {"pattern": r"(?i)pass\s*word", "terms": ["vault"], "type": "input_filter"},
        {"type": "output_guard"},
    ]
    assert vault["theme"] == {
        "accent": "#112233",
        "logo_url": "https://example.com/l.png",
        "radius": 12,
    }
    assert (vault["scoring_plugin_id"], vault["scoring_entrypoint"]) == (
        "weighted",
        "prompt_challenges_example.scorers:WeightedScorer",
    )
    assert challenges["demo-pirate-greeting"]["evaluator_plugin_id"] == "simple"
    assert challenges["demo-dify-bot"]["target_config"]["app_key_secret"] == "dify-app-key"

    collections = {entry["slug"]: entry for entry in data["collections"]}
    assert list(collections["demo-gandalf"]) == [
        "slug",
        "name",
        *[f for f in COLLECTION_FIELDS if f not in ("slug", "name")],
        "challenges",
    ]
    assert collections["demo-gandalf"]["in_order"] is True
    assert collections["demo-gandalf"]["challenges"] == [f"demo-gandalf-{n}" for n in range(1, 8)]
    assert collections["demo-side-quests"]["challenges"] == ["demo-vault-window", "demo-dify-bot"]

    red_blue = {entry["name"]: entry for entry in data["red_blue_challenges"]}
    league = red_blue["Custom categories league"]
    assert list(league) == ["name", *[f for f in RED_BLUE_FIELDS if f != "name"]]
    assert league["judge_suite"] == [
        "CBRNE",
        {"code": "LEAK", "label": "Data leak", "rubric": "Any PII."},
    ]
    assert (league["time_penalty_per_second"], league["token_penalty_per_1k"]) == (0.125, 2.5)
    assert "Demo: Red vs Blue" in red_blue

    # Waves by name with their challenges' slugs; bounties by slug and codename.
    assert data["waves"] == [
        {
            "name": "Week 1",
            "challenges": ["demo-vault-window"],
            "opens_at": "2026-12-01T17:00:00Z",
            "closes_at": "2026-12-08T17:00:00.500000Z",
        },
        {
            "name": "Week 2",
            "challenges": ["demo-arena", "demo-gandalf-2"],
            "opens_at": "2026-12-08T17:00:00Z",
            "closes_at": "2026-12-15T17:00:00Z",
        },
    ]
    assert data["bounties"] == [
        {
            "challenge": "demo-arena",
            "codename": "",
            "kind": "per_break",
            "amount": 12.5,
            "currency": "EUR",
            "cap": 200.0,
        },
        {
            "challenge": "demo-arena",
            "codename": "Model Teal",
            "kind": "first_break",
            "amount": 80.0,
            "currency": "USD",
            "cap": None,
        },
        {
            "challenge": "demo-gandalf-2",
            "codename": "",
            "kind": "fastest_n",
            "amount": 20.0,
            "currency": "USD",
            "cap": 3.0,
        },
    ]


def test_it_names_secrets_and_never_holds_a_value(rich_workspace):
    text = export()

    assert parse(text)["secrets"] == [
        "demo-password-1",
        "demo-password-2",
        "demo-password-3",
        "demo-password-4",
        "demo-password-5",
        "demo-password-6",
        "demo-password-talk",
        "dify-app-key",
        "vault-key",
    ]
    assert SECRET_VALUE not in text
    assert DIFY_KEY_VALUE not in text
    for secret in rich_workspace.secrets.all():
        assert secret.value not in text


def test_it_holds_no_ids_and_no_timestamps_of_ours(rich_workspace):
    text = export()

    assert not UUID.search(text)
    for word in ("created_at", "updated_at", "created_by", "updated_by", "workspace", " id:"):
        assert word not in text
    assert str(rich_workspace.id) not in text


def test_it_writes_the_same_bytes_whatever_order_rows_were_made_in(rich_workspace):
    first = export()
    # A row touched later moves in the database's own order; the file does not change.
    Challenge.objects.filter(slug="demo-gandalf-1").update(name="Gandalf level 1: Baby steps")
    ChallengeCollection.objects.filter(slug="demo-gandalf").update(description="x")
    ChallengeCollection.objects.filter(slug="demo-gandalf").update(
        description="Seven levels of a password-keeping assistant, each better guarded."
    )
    assert export() == first
    assert event_export(workspace=rich_workspace) == first


def test_it_leaves_out_other_workspaces(rich_workspace, workspace):
    from tests import factories

    factories.make_challenge(workspace=workspace, slug="not-in-the-demo")

    assert "not-in-the-demo" not in export()
    assert parse(export(workspace.slug))["challenges"][0]["slug"] == "not-in-the-demo"


def test_it_refuses_two_red_blue_challenges_of_one_name(workspace):
    for _ in range(2):
        red_blue_challenge_create(workspace=workspace, user=None, name="Twins")

    with pytest.raises(CommandError, match="share a name: Twins"):
        export(workspace.slug)
    assert RedBlueChallenge.objects.filter(name="Twins").count() == 2


def test_it_refuses_an_unknown_workspace(db):
    with pytest.raises(CommandError, match="No workspace is named 'nowhere'"):
        export("nowhere")
