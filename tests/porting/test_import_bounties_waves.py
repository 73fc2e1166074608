"""Waves and bounties in an event file: waves by name with their challenges' slugs, bounties
by challenge slug, codename and kind; an import updates what the workspace has in place and
refuses, with the line, what the console would."""

from datetime import UTC, datetime
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from challenges.models import Bounty, Wave
from tests.porting.test_import_errors import refused

pytestmark = pytest.mark.django_db

EVENT = """\
version: 1
challenges:
- slug: bw-arena
  name: Arena
  success_pattern: PWNED
  target_assignment: choice
  targets:
  - codename: Model Plum
    target: offline
  - codename: Model Teal
    target: offline
- slug: bw-vault
  name: Vault
  success_pattern: PWNED
waves:
- name: Week 1
  challenges:
  - bw-arena
  - bw-vault
  opens_at: 2026-12-01T17:00:00Z
  closes_at: '2026-12-08T17:00:00Z'
bounties:
- challenge: bw-arena
  codename: Model Teal
  kind: first_break
  amount: 80
- challenge: bw-vault
  kind: per_break
  amount: 12.5
  cap: 200
  currency: EUR
"""


def imported(tmp_path, workspace, text: str) -> str:
    event = tmp_path / "event.yaml"
    event.write_text(text, encoding="utf-8")
    out = StringIO()
    call_command(
        "importchallenges", str(event), workspace=workspace.slug, interactive=False, stdout=out
    )
    return out.getvalue()


def export(workspace) -> str:
    out = StringIO()
    call_command("exportchallenges", workspace=workspace.slug, stdout=out)
    return out.getvalue()


def test_it_creates_waves_and_bounties_by_slug_and_codename(tmp_path, workspace):
    output = imported(tmp_path, workspace, EVENT)

    assert "created 1 waves: Week 1" in output
    assert "created 2 bounties: bw-arena first_break (Model Teal), bw-vault per_break" in output
    wave = Wave.objects.get(workspace=workspace)
    assert sorted(wave.challenges.values_list("slug", flat=True)) == ["bw-arena", "bw-vault"]
    assert (wave.opens_at, wave.closes_at) == (
        datetime(2026, 12, 1, 17, tzinfo=UTC),
        datetime(2026, 12, 8, 17, tzinfo=UTC),
    )
    teal = Bounty.objects.get(challenge__slug="bw-arena")
    assert (teal.codename, teal.kind, teal.amount, teal.currency, teal.cap) == (
        "Model Teal",
        "first_break",
        Decimal("80.00"),
        "USD",
        None,
    )
    per_break = Bounty.objects.get(challenge__slug="bw-vault")
    assert (per_break.amount, per_break.currency, per_break.cap) == (
        Decimal("12.50"),
        "EUR",
        Decimal("200.00"),
    )


def test_a_second_import_updates_in_place_and_a_moved_wave_is_announced_again(tmp_path, workspace):
    imported(tmp_path, workspace, EVENT)
    wave = Wave.objects.get(workspace=workspace)
    Wave.objects.filter(pk=wave.pk).update(state=Wave.State.OPEN)
    teal = Bounty.objects.get(codename="Model Teal")
    first = export(workspace)

    # The same file again changes nothing (the wave keeps what beat announced).
    output = imported(tmp_path, workspace, first)
    assert "updated 1 waves: Week 1" in output
    assert Wave.objects.get().state == Wave.State.OPEN
    assert export(workspace) == first

    moved = EVENT.replace("2026-12-01T17:00:00Z", "2026-12-02T17:00:00Z").replace(
        "  amount: 80\n", "  amount: 95\n"
    )
    output = imported(tmp_path, workspace, moved)

    assert "updated 2 bounties: bw-arena first_break (Model Teal), bw-vault per_break" in output
    assert Bounty.objects.count() == 2
    teal.refresh_from_db()
    assert teal.amount == Decimal("95.00")  # the same row: its payouts stay its own
    wave = Wave.objects.get()
    assert wave.opens_at == datetime(2026, 12, 2, 17, tzinfo=UTC)
    assert wave.state == Wave.State.SCHEDULED


def test_it_refuses_a_codename_the_challenge_does_not_have(tmp_path, workspace):
    text = EVENT.replace("  codename: Model Teal\n", "  codename: Model Gold\n")

    assert refused(tmp_path, workspace, text) == [
        "24: bounties[0].codename: Not one of this challenge's codenames (Model Plum, Model Teal)."
    ]
    assert not Wave.objects.exists()


def test_it_refuses_unknown_slugs_bad_money_and_a_repeated_bounty(tmp_path, workspace):
    text = (
        EVENT.replace("  - bw-vault\n  opens_at", "  - bw-nowhere\n  opens_at")
        .replace("- challenge: bw-vault\n", "- challenge: bw-gone\n")
        .replace("  currency: EUR\n", "  currency: euro\n")
    )
    text += "- challenge: bw-arena\n  codename: Model Teal\n  kind: first_break\n  amount: 5\n"

    # The file's shape is checked first: its problems are all that is said.
    assert refused(tmp_path, workspace, text) == [
        "31: bounties[1].currency: An ISO 4217 code such as USD.",
    ]
    text = text.replace("  currency: euro\n", "")
    assert refused(tmp_path, workspace, text) == [
        "31: bounties[2]: Another bounty above has this challenge, codename and kind.",
    ]
    text = text.replace(
        "  codename: Model Teal\n  kind: first_break\n  amount: 5\n",
        "  codename: Model Plum\n  kind: first_break\n  amount: 5\n",
    )
    assert refused(tmp_path, workspace, text) == [
        "19: waves[0].challenges[1]: No challenge with the slug 'bw-nowhere' in this file or "
        "this workspace.",
        "27: bounties[1].challenge: No challenge with the slug 'bw-gone' in this file or this "
        "workspace.",
    ]


def test_it_refuses_a_wave_that_closes_before_it_opens_and_a_per_break_without_a_cap(
    tmp_path, workspace
):
    text = EVENT.replace("'2026-12-08T17:00:00Z'", "'2026-11-08T17:00:00Z'").replace(
        "  cap: 200\n", ""
    )

    assert refused(tmp_path, workspace, text) == [
        "21: waves[0].closes_at: A wave closes after it opens.",
        "27: bounties[1].cap: A per-break bounty needs a cap: the most paid in total, at least "
        "one amount.",
    ]
