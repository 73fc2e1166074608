"""A bad file is refused whole: every problem with the line of the node it is about, and
not one row written."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from challenges.models import Challenge, ChallengeCollection, Secret
from redblue.models import RedBlueChallenge
from tests import factories

pytestmark = pytest.mark.django_db

GOOD = """\
version: 1
secrets:
- vault
challenges:
- slug: imp-vault
  name: Vault
  system_prompt: The password is {{secret}}.
  success_pattern: '{{secret}}'
  secret_ref: vault
- slug: imp-magic
  name: Magic words
  success_type: regex
  success_pattern: ^I have been PWNED$
collections:
- slug: imp-levels
  name: Levels
  in_order: true
  challenges:
  - imp-vault
  - imp-magic
red_blue_challenges:
- name: League
  banned_terms:
  - sudo
"""


def rows() -> dict[str, int]:
    return {
        "challenges": Challenge.objects.count(),
        "collections": ChallengeCollection.objects.count(),
        "red_blue": RedBlueChallenge.objects.count(),
        "secrets": Secret.objects.count(),
    }


def replaced(line: int, text: str) -> str:
    lines = GOOD.splitlines()
    lines[line - 1] = text
    return "\n".join(lines) + "\n"


def refused(tmp_path, workspace, text: str) -> list[str]:
    """Import `text`; the problem lines printed, after checking nothing was written."""
    before = rows()
    event = tmp_path / "event.yaml"
    event.write_text(text, encoding="utf-8")
    err = StringIO()
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command(
            "importchallenges",
            str(event),
            workspace=workspace.slug,
            interactive=False,
            stdout=StringIO(),
            stderr=err,
        )
    assert rows() == before
    return [line.removeprefix(f"{event}:").strip() for line in err.getvalue().splitlines()]


def test_the_good_file_imports(tmp_path, workspace):
    event = tmp_path / "event.yaml"
    event.write_text(GOOD, encoding="utf-8")
    call_command(
        "importchallenges",
        str(event),
        workspace=workspace.slug,
        interactive=False,
        stdout=StringIO(),
    )
    assert rows() == {"challenges": 2, "collections": 1, "red_blue": 1, "secrets": 1}


def test_it_gives_the_line_of_a_syntax_error(tmp_path, workspace):
    problems = refused(tmp_path, workspace, replaced(12, "  success_type: [regex"))

    assert len(problems) == 1
    assert problems[0].startswith("13: (file): Not valid YAML: while parsing a flow sequence")
    assert "(it began on line 12)" in problems[0]


def test_it_gives_the_line_of_each_schema_error(tmp_path, workspace):
    text = replaced(17, "  in_order: maybe").replace(
        "  name: Magic words\n", "  name: Magic words\n  colour: red\n"
    )

    assert refused(tmp_path, workspace, text) == [
        "12: challenges[1].colour: Unknown field.",
        "18: collections[0].in_order: Must be true or false.",
    ]


def test_it_points_at_the_entry_that_lacks_a_required_key(tmp_path, workspace):
    text = GOOD.replace("- name: League\n", "- description: no name\n")

    assert refused(tmp_path, workspace, text) == [
        "22: red_blue_challenges[0].name: Required, and missing.",
    ]


def test_it_refuses_a_reference_to_an_unknown_slug(tmp_path, workspace):
    assert refused(tmp_path, workspace, replaced(20, "  - imp-nowhere")) == [
        "20: collections[0].challenges[1]: No challenge with the slug 'imp-nowhere' in this "
        "file or this workspace."
    ]


def test_it_refuses_a_bad_regex_with_the_consoles_words(tmp_path, workspace):
    problems = refused(tmp_path, workspace, replaced(13, "  success_pattern: ^(unclosed"))

    assert len(problems) == 1
    assert problems[0].startswith("13: challenges[1].success_pattern: ")
    assert "missing )" in problems[0] or "missing ')'" in problems[0] or "paren" in problems[0]


def test_it_points_at_the_defence_layer_whose_pattern_is_bad(tmp_path, workspace):
    text = GOOD.replace(
        "  success_type: regex\n",
        "  success_type: regex\n  defences:\n  - type: output_guard\n"
        "  - type: input_filter\n    pattern: '[a-'\n",
    )
    problems = refused(tmp_path, workspace, text)

    assert len(problems) == 1
    assert problems[0].startswith(
        "15: challenges[1].defences[1]: Layer 2: the pattern is not valid"
    )


def test_it_refuses_a_slug_of_another_workspace(tmp_path, workspace, other_workspace):
    factories.make_challenge(workspace=other_workspace, slug="imp-magic")

    assert refused(tmp_path, workspace, GOOD) == [
        "10: challenges[1].slug: The challenge slug 'imp-magic' belongs to another workspace "
        "(slugs are unique across the site): give this challenge another slug in the file."
    ]
    assert Challenge.objects.get(slug="imp-magic").workspace == other_workspace


def test_it_refuses_a_slug_twice_in_one_file(tmp_path, workspace):
    assert refused(tmp_path, workspace, replaced(10, "- slug: imp-vault")) == [
        "10: challenges[1].slug: Another entry above has this slug."
    ]


def test_it_writes_nothing_when_the_last_entry_fails(tmp_path, workspace):
    # Secrets, challenges and the collection are written before the red/blue entry fails.
    text = GOOD + "  defense_selection_policy: whoever_shouts\n"
    problems = refused(tmp_path, workspace, text)

    assert problems == [
        "25: red_blue_challenges[0].defense_selection_policy: Use one of: latest_best, "
        "random_active, round_robin, request_new_if_none."
    ]


def test_it_lists_every_problem_at_once(tmp_path, workspace):
    text = replaced(13, "  success_pattern: ^(unclosed").replace(
        "  secret_ref: vault\n", "  secret_ref: no-such-secret\n"
    )
    text = text.replace("  - imp-magic\n", "  - imp-magic\n  - imp-nowhere\n")
    problems = refused(tmp_path, workspace, text)

    assert [problem.split(":")[0] for problem in problems] == ["9", "13", "21"]
    assert "There is no secret named 'no-such-secret'" in problems[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "version: 1\nsecrets: &names\n- a\nchallenges: *names\n",
            "4: (file): Not valid YAML: anchors and aliases (*name) are not accepted.",
        ),
        ('version: 1\nsecrets:\n- "a\\0b"\n', "3: secrets[0]: Text may not hold a NUL character."),
        ("version: 1\nversion: 1\n", "2: version: A repeated key."),
        (
            'version: 1\nsecrets:\n- "a\\ud800"\n',
            "3: secrets[0]: Text may not hold a lone surrogate (\\ud800–\\udfff).",
        ),
        ("version: " + "[" * 400 + "]" * 400 + "\n", "(file): The file is nested too deeply."),
        ("version: 2\n", "1: version: Must be 1."),
        (
            "version: 1\nchallenges:\n- slug: x\n  name: X\n  ends_at: 5\n"
            "red_blue_challenges:\n- name: R\n  judge_suite:\n  - 7\n",
            [
                "5: challenges[0].ends_at: Must be text or null.",
                "9: red_blue_challenges[0].judge_suite[0]: Must be text or a mapping.",
            ],
        ),
        ("- version: 1\n", "1: (file): The file must be a mapping (key: value, …)."),
        ("", "1: (file): The file is empty."),
        (
            "version: 1\nchallenges:\n- slug: x\n  name: X\n  success_pattern: a\n"
            "  max_attempts_per_hour: .inf\n",
            "6: challenges[0].max_attempts_per_hour: Numbers must be finite.",
        ),
        (
            "version: 1\nchallenges:\n- slug: x\n  name: X\n  success_pattern: a\n"
            "  starts_at: 2026-13-45\n",
            "6: challenges[0].starts_at: Datetime has wrong format. Use one of these "
            "formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
        ),
    ],
)
def test_it_refuses_what_yaml_allows_and_we_do_not(tmp_path, workspace, text, expected):
    assert refused(tmp_path, workspace, text) == (
        expected if isinstance(expected, list) else [expected]
    )


HINTED = GOOD.replace(
    "  secret_ref: vault\n",
    "  secret_ref: vault\n  hints:\n  - body_md: Look up.\n  - body_md: Ask twice.\n"
    "    cost: 20\n  prerequisites:\n  - imp-magic\n",
)


def test_the_hinted_file_imports(tmp_path, workspace):
    event = tmp_path / "event.yaml"
    event.write_text(HINTED, encoding="utf-8")
    call_command(
        "importchallenges",
        str(event),
        workspace=workspace.slug,
        interactive=False,
        stdout=StringIO(),
    )
    vault = Challenge.objects.get(slug="imp-vault")
    assert [(h.order, h.body_md, h.cost) for h in vault.hints.order_by("order")] == [
        (1, "Look up.", 0),
        (2, "Ask twice.", 20),
    ]
    assert list(vault.prerequisite_links.values_list("prerequisite__slug", flat=True)) == [
        "imp-magic"
    ]


def test_it_refuses_an_unknown_prerequisite_and_a_bad_hint(tmp_path, workspace):
    text = HINTED.replace(
        "  prerequisites:\n  - imp-magic\n", "  prerequisites:\n  - imp-nowhere\n"
    )
    text = text.replace("  - body_md: Look up.\n", "  - body_md: '   '\n")

    assert refused(tmp_path, workspace, text) == [
        "11: challenges[0].hints[0].body_md: A hint needs a text.",
        "15: challenges[0].prerequisites[0]: No challenge with the slug 'imp-nowhere' in this "
        "file or this workspace.",
    ]


def test_it_refuses_prerequisites_that_make_a_cycle(tmp_path, workspace):
    text = HINTED.replace(
        "  success_type: regex\n", "  success_type: regex\n  prerequisites:\n  - imp-vault\n"
    )
    problems = refused(tmp_path, workspace, text)

    assert len(problems) == 1
    assert problems[0].startswith(
        "20: challenges[1].prerequisites: That would make a cycle, so none of them could "
        "ever be played: “Magic words” → “Vault” → “Magic words”"
    )


def test_it_refuses_a_hint_dearer_than_a_solve(tmp_path, workspace):
    assert refused(tmp_path, workspace, HINTED.replace("cost: 20", "cost: 500")) == [
        "13: challenges[0].hints[1].cost: At most 100."
    ]
