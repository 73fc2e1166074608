"""A rich workspace to export: the demo (every evaluator kind, the Gandalf tower in order,
defences, themes, a plugin challenge, red/blue) plus what the demo leaves out (hints,
prerequisites, a Dify target, a window, custom scoring, awkward text)."""

from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command

from challenges.models import Challenge
from challenges.services.bounties import bounty_create
from challenges.services.challenges import challenge_create
from challenges.services.collections import collection_create, collection_set_challenges
from challenges.services.hints import hint_create
from challenges.services.prerequisites import challenge_set_prerequisites
from challenges.services.secrets import secret_create
from challenges.services.waves import wave_create
from players.models import Workspace
from redblue.porting.document import event_parse
from redblue.teams.services.challenges import red_blue_challenge_create

# Distinct enough that finding it anywhere in an export is a leak, not a coincidence.
SECRET_VALUE = "VALUE-THAT-MUST-NEVER-BE-EXPORTED-7731"
DIFY_KEY_VALUE = "app-dify-key-never-exported-5512"
# The Dify target's host, allowed by the operator (EGRESS_ALLOW_HOSTS) so no DNS is asked.
DIFY_HOST = "dify.example.com"
# Text a file must carry byte for byte: trailing spaces, a tab, a CRLF, YAML's own words,
# leading blanks, quotes, a final newline, and non-ASCII.
AWKWARD_TEXT = (
    "  Leading blanks, trailing blanks   \n\tA tab, a CRLF\r\nyes: no # not a comment\n"
    "'quotes' \"both\" — ünïcødé ✓ {{secret}}\n\n"
)


def build_rich_workspace() -> Workspace:
    call_command("demo", stdout=StringIO())
    call_command("demo_redblue", stdout=StringIO())
    workspace = Workspace.objects.get(name="Demo")
    secret_create(workspace=workspace, name="vault-key", value=SECRET_VALUE)
    secret_create(workspace=workspace, name="dify-app-key", value=DIFY_KEY_VALUE)
    windowed = challenge_create(
        workspace=workspace,
        user=None,
        slug="demo-vault-window",
        name="The vault: open for one weekend",
        description="Everything a creator can set, set.",
        goal="Open the vault.",
        instructions_md="# The vault\n\n* one\n* two\n",
        system_prompt=AWKWARD_TEXT,
        success_type="regex",
        success_pattern=r"(?i)vault\s+{{secret}}",
        secret_ref="vault-key",
        scoring_strategy="custom",
        scoring_plugin_id="weighted",
        scoring_entrypoint="prompt_challenges_example.scorers:WeightedScorer",
        scoring_config={"weights": {"tokens": 0.5, "time": 1.5}, "base": 10},
        evaluator_type="llm-judge",
        judge_config={
            "judge_model": "offline/keywords",
            "rating_scale": 10,
            "pass_threshold": 6,
            "temperature": 0.2,
        },
        max_attempts_per_hour=12,
        starts_at=datetime(2026, 12, 4, 9, 30, tzinfo=UTC),
        ends_at=datetime(2026, 12, 6, 18, 0, 0, 250000, tzinfo=UTC),
        mask_variables=["account_number", "pin"],
        keep_failed_prompts=True,
        app_id="dify-app-123",
        workflow_id="wf-456",
        theme={"radius": 12, "accent": "#112233", "logo_url": "https://example.com/l.png"},
        defences=[
            {"type": "input_filter", "pattern": r"(?i)pass\s*word", "terms": ["vault"]},
            {"type": "output_guard"},
        ],
    )
    dify = challenge_create(
        workspace=workspace,
        user=None,
        slug="demo-dify-bot",
        name="A Dify app as the target",
        success_pattern="PWNED",
        target="dify",
        target_config={
            "base_url": f"https://{DIFY_HOST}",
            "app_key_secret": "dify-app-key",
            "inputs": {"lang": "fr"},
        },
        is_active=False,
    )
    hint_create(challenge=windowed, order=1, body_md="Free: the vault *likes* poems.\n")
    hint_create(challenge=windowed, order=2, cost=20, body_md="Paid:\n\n- ask twice  \n- in French")
    gandalf_2 = Challenge.objects.get(slug="demo-gandalf-2")
    hint_create(challenge=gandalf_2, body_md="Try a role.", cost=5)
    by_slug = dict(Challenge.objects.filter(workspace=workspace).values_list("slug", "id"))
    challenge_set_prerequisites(
        challenge=windowed,
        prerequisite_ids=[by_slug["demo-magic-words"], by_slug["demo-gandalf-1"]],
    )
    challenge_set_prerequisites(challenge=dify, prerequisite_ids=[windowed.id])
    loose = collection_create(
        workspace=workspace,
        user=None,
        slug="demo-side-quests",
        name="Side quests",
        is_public=False,
        scoring_strategy="fewest_tokens_total",
        theme={"font": "serif"},
    )
    # Deliberately not in slug order: a file keeps the collection's own order.
    collection_set_challenges(collection=loose, challenge_ids=[windowed.id, dify.id])
    red_blue_challenge_create(
        workspace=workspace,
        user=None,
        name="Custom categories league",
        judge_suite=["CBRNE", {"code": "LEAK", "label": "Data leak", "rubric": "Any PII."}],
        defense_selection_policy="round_robin",
        attack_selection_policy="random_active",
        scoring_strategy="custom",
        scoring_plugin_id="weighted",
        time_penalty_per_second="0.125",
        token_penalty_per_1k="2.5",
        pair_cooldown_seconds=90,
        banned_terms=["BEGIN SYSTEM PROMPT", "sudo"],
        max_submissions_per_hour=7,
        is_active=False,
        transcripts_published=True,
        target="openai",
        target_model="gpt-4o-mini",
    )
    # An event with money on it: waves by slug, bounties by slug and codename.
    arena = challenge_create(
        workspace=workspace,
        user=None,
        slug="demo-arena",
        name="Two models, one secret",
        success_pattern="PWNED",
        target_assignment="choice",
        targets=[
            {"codename": "Model Plum", "target": "offline"},
            {"codename": "Model Teal", "target": "offline"},
        ],
    )
    wave_create(
        workspace=workspace,
        name="Week 2",
        challenge_ids=[arena.id, gandalf_2.id],
        opens_at=datetime(2026, 12, 8, 17, 0, tzinfo=UTC),
        closes_at=datetime(2026, 12, 15, 17, 0, tzinfo=UTC),
    )
    wave_create(
        workspace=workspace,
        name="Week 1",
        challenge_ids=[windowed.id],
        opens_at=datetime(2026, 12, 1, 17, 0, tzinfo=UTC),
        closes_at=datetime(2026, 12, 8, 17, 0, 0, 500000, tzinfo=UTC),
    )
    bounty_create(challenge=arena, codename="Model Teal", kind="first_break", amount="80")
    bounty_create(challenge=arena, kind="per_break", amount="12.50", cap="200", currency="EUR")
    bounty_create(challenge=gandalf_2, kind="fastest_n", amount="20", cap=3)
    return workspace


@pytest.fixture(autouse=True)
def _dify_host_allowed(settings):
    settings.EGRESS_ALLOW_HOSTS = [DIFY_HOST]


@pytest.fixture
def rich_workspace(db) -> Workspace:
    return build_rich_workspace()


def parse(text: str) -> dict:
    return event_parse(text).data
