"""The challenge form: sections that follow the evaluator, an inline secret, JSON help."""

import re

import pytest

from challenges.models import Challenge, Secret
from challenges.services.secrets import secret_create
from tests.challenges.test_admin_challenges import ADD, admin_client, change_url, form_data
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db


def fieldset_classes(html: str, heading: str) -> str:
    for match in re.finditer(r'<fieldset class="([^"]*)"(.*?)</fieldset>', html, re.S):
        if f">{heading}</h2>" in match.group(2):
            return match.group(1)
    raise AssertionError(f"no fieldset {heading!r}")


def test_it_opens_the_sections_of_a_rules_challenge_and_collapses_the_rest(creator, workspace):
    html = admin_client(creator).get(ADD).content.decode()

    assert "collapse" not in fieldset_classes(html, "Rules")
    for heading in ("LLM judge", "Custom evaluator plugin", "Dify", "Theme", "Advanced"):
        assert "collapse" in fieldset_classes(html, heading), heading
    assert "when-evaluator_type-llm-judge" in fieldset_classes(html, "LLM judge")
    assert "when-target-dify" in fieldset_classes(html, "Dify")
    assert "js/challenge_admin_form.js" in html
    assert "<script>" not in html.replace('<script src="', "")


def test_it_opens_the_judge_section_for_a_judged_challenge(creator, workspace):
    challenge = make_challenge(
        workspace=workspace,
        evaluator_type="llm-judge",
        success_pattern="",
        judge_config={"judge_model": "offline/judge"},
    )

    html = admin_client(creator).get(change_url(challenge)).content.decode()

    assert "collapse" not in fieldset_classes(html, "LLM judge")
    assert "collapse" in fieldset_classes(html, "Rules")


def test_it_explains_every_dify_term(creator, workspace):
    html = admin_client(creator).get(ADD).content.decode()

    for field in ("app_id", "workflow_id", "target_config", "mask_variables", "target"):
        help_block = re.search(rf'id="id_{field}_helptext">\s*<div>(.*?)</div>', html, re.S)
        assert help_block and len(help_block.group(1)) > 30, field
    assert "Dify app" in html


def test_it_creates_a_secret_from_the_form_and_uses_it(creator, workspace):
    response = admin_client(creator).post(
        ADD,
        form_data(
            workspace,
            success_pattern="{{secret}}",
            system_prompt="The password is {{secret}}.",
            new_secret_name="vault-password",
            new_secret_value="MOONLIGHT",
        ),
    )

    assert response.status_code == 302, response.content.decode()[:3000]
    challenge = Challenge.objects.get()
    assert challenge.secret_ref == "vault-password"
    assert Secret.objects.get(workspace=workspace, name="vault-password").value == "MOONLIGHT"


def test_it_refuses_a_new_secret_named_like_an_existing_one_and_writes_nothing(creator, workspace):
    secret_create(workspace=workspace, name="vault-password", value="OLD")

    response = admin_client(creator).post(
        ADD,
        form_data(workspace, new_secret_name="vault-password", new_secret_value="NEW"),
    )

    assert response.status_code == 200
    assert "already has a secret with this name" in response.content.decode()
    assert not Challenge.objects.exists()
    assert Secret.objects.get(name="vault-password").value == "OLD"


def test_it_never_echoes_a_new_secret_value_back(creator, workspace):
    response = admin_client(creator).post(
        ADD,
        form_data(workspace, name="", new_secret_name="vault", new_secret_value="MOONLIGHT"),
    )

    assert response.status_code == 200
    assert "MOONLIGHT" not in response.content.decode()
    assert not Secret.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("target_config", '{"base_url": "x",}', "This is not valid JSON"),
        ("target_config", "[1, 2]", "This must be an object"),
        ("mask_variables", '{"a": 1}', "This must be a list"),
        ("theme", "{oops", "line 1, column 2"),
    ],
)
def test_it_says_which_json_field_is_wrong_and_why(creator, workspace, field, value, message):
    response = admin_client(creator).post(ADD, form_data(workspace, **{field: value}))

    assert response.status_code == 200
    html = response.content.decode()
    row = re.search(rf'<div class="form-row[^"]*field-{field}.*?</div>\s*</div>', html, re.S)
    assert row and message in row.group(0), html[:200]
    assert not Challenge.objects.exists()
