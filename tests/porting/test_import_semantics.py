"""What an import does to a workspace that already has rows: a slug it has is updated in
place, a left-out key takes its default, rows the file does not name are left alone."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from challenges.models import Challenge, ChallengeCollection, LeaderboardEntry
from redblue.models import RedBlueChallenge
from tests import factories
from tests.porting.test_import_errors import GOOD, rows

pytestmark = pytest.mark.django_db


def run(tmp_path, workspace, text: str, *options: str) -> str:
    event = tmp_path / "event.yaml"
    event.write_text(text, encoding="utf-8")
    out = StringIO()
    call_command(
        "importchallenges",
        str(event),
        "--workspace",
        workspace.slug,
        *options,
        stdout=out,
        stderr=StringIO(),
    )
    return out.getvalue()


def test_it_updates_a_slug_the_workspace_has_in_place(tmp_path, workspace):
    run(tmp_path, workspace, GOOD, "--no-input")
    vault = Challenge.objects.get(slug="imp-vault")
    factories.record_win(vault, "dify-player-1")
    league = RedBlueChallenge.objects.get(name="League")

    changed = GOOD.replace("  name: Vault\n", "  name: The vault, renamed\n")
    output = run(tmp_path, workspace, changed, "--no-input")

    assert "updated 2 challenges: imp-vault, imp-magic" in output
    assert "updated 1 collections: imp-levels" in output
    assert "updated 1 red blue challenges: League" in output
    renamed = Challenge.objects.get(slug="imp-vault")
    assert (renamed.id, renamed.name) == (vault.id, "The vault, renamed")
    # Same row: its players and board stay.
    assert LeaderboardEntry.objects.filter(challenge=renamed).count() == 1
    assert RedBlueChallenge.objects.get(name="League").id == league.id
    assert rows() == {"challenges": 2, "collections": 1, "red_blue": 1, "secrets": 1}


def test_an_entry_is_the_whole_definition(tmp_path, workspace):
    themed = GOOD.replace(
        "  secret_ref: vault\n", "  secret_ref: vault\n  theme:\n    font: mono\n"
    )
    run(tmp_path, workspace, themed, "--no-input")
    assert Challenge.objects.get(slug="imp-vault").theme == {"font": "mono"}

    run(tmp_path, workspace, GOOD, "--no-input")

    assert Challenge.objects.get(slug="imp-vault").theme == {}


def test_it_leaves_rows_the_file_does_not_name_alone(tmp_path, workspace):
    kept = factories.make_challenge(workspace=workspace, slug="kept-as-is", name="Kept")

    run(tmp_path, workspace, GOOD, "--no-input")

    assert Challenge.objects.get(slug="kept-as-is").name == kept.name
    assert Challenge.objects.filter(workspace=workspace).count() == 3


def test_it_sets_a_collection_to_the_files_order(tmp_path, workspace):
    run(tmp_path, workspace, GOOD, "--no-input")
    swapped = GOOD.replace("  - imp-vault\n  - imp-magic\n", "  - imp-magic\n  - imp-vault\n")

    run(tmp_path, workspace, swapped, "--no-input")

    collection = ChallengeCollection.objects.get(slug="imp-levels")
    order = collection.items.order_by("position").values_list("challenge__slug", flat=True)
    assert list(order) == ["imp-magic", "imp-vault"]


def test_a_collection_may_name_a_challenge_the_workspace_already_has(tmp_path, workspace):
    factories.make_challenge(workspace=workspace, slug="already-here")
    text = GOOD.replace("  - imp-magic\n", "  - imp-magic\n  - already-here\n")

    run(tmp_path, workspace, text, "--no-input")

    collection = ChallengeCollection.objects.get(slug="imp-levels")
    assert collection.items.count() == 3


def test_it_refuses_a_collection_slug_of_another_workspace(tmp_path, workspace, other_workspace):
    from challenges.services.collections import collection_create

    collection_create(workspace=other_workspace, user=None, slug="imp-levels", name="Theirs")

    with pytest.raises(CommandError, match="Nothing was imported"):
        run(tmp_path, workspace, GOOD, "--no-input")
    assert Challenge.objects.filter(workspace=workspace).count() == 0
    assert ChallengeCollection.objects.get(slug="imp-levels").name == "Theirs"


def test_it_refuses_a_workspace_that_does_not_exist(tmp_path, db):
    event = tmp_path / "event.yaml"
    event.write_text(GOOD, encoding="utf-8")
    with pytest.raises(CommandError, match="createcreator --workspace NAME creates one"):
        call_command("importchallenges", str(event), "--workspace", "nowhere", "--no-input")


def test_the_documented_example_imports(tmp_path, workspace):
    docs = (Path(__file__).resolve().parents[2] / "docs" / "import-export.md").read_text()
    example = docs.split("## An example", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]

    output = run(tmp_path, workspace, example, "--no-input")

    assert "created 2 challenges: vault-1, vault-judge" in output
    assert Challenge.objects.get(slug="vault-1").defences[1] == {"type": "output_guard"}
    assert Challenge.objects.get(slug="vault-1").hints.get(order=2).cost == 25
    judged = Challenge.objects.get(slug="vault-judge")
    assert [link.prerequisite.slug for link in judged.prerequisite_links.all()] == ["vault-1"]


def test_a_reimport_keeps_the_hints_players_paid_for(tmp_path, workspace, player):
    from challenges.models import HintUnlock
    from challenges.services.hints import hint_unlock
    from tests.porting.test_import_errors import HINTED

    run(
        tmp_path,
        workspace,
        HINTED.replace("  - imp-magic\n", "", 1).replace(
            "  prerequisites:\n", "  prerequisites: []\n"
        ),
        "--no-input",
    )
    vault = Challenge.objects.get(slug="imp-vault")
    free, paid = vault.hints.order_by("order")
    hint_unlock(hint=paid, account=player)

    # The free hint gone, the paid one reworded (still order 2), a new third one.
    changed = HINTED.replace("  - body_md: Look up.\n", "").replace(
        "  - body_md: Ask twice.\n    cost: 20\n",
        "  - body_md: Ask thrice.\n    cost: 20\n    order: 2\n  - body_md: Sing.\n    order: 3\n",
    )
    run(tmp_path, workspace, changed, "--no-input")

    hints = list(vault.hints.order_by("order"))
    assert [(h.order, h.body_md, h.cost) for h in hints] == [
        (2, "Ask thrice.", 20),
        (3, "Sing.", 0),
    ]
    assert hints[0].id == paid.id
    assert HintUnlock.objects.filter(hint=paid).count() == 1
    assert not vault.hints.filter(id=free.id).exists()
    assert list(vault.prerequisite_links.values_list("prerequisite__slug", flat=True)) == [
        "imp-magic"
    ]


def test_a_date_may_be_written_unquoted(tmp_path, workspace):
    text = GOOD.replace("  name: Vault\n", "  name: Vault\n  starts_at: 2026-12-04T09:30:00Z\n")

    run(tmp_path, workspace, text, "--no-input")

    starts_at = Challenge.objects.get(slug="imp-vault").starts_at
    assert starts_at.isoformat() == "2026-12-04T09:30:00+00:00"
