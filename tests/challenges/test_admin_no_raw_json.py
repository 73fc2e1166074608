"""No raw JSON a creator must hand-write (issue 20.13): defence layers have a small editor
each, banned terms are typed one a line, webhook event types are boxes to tick; the JSON
console API is unchanged."""

import re

import pytest

from challenges.models import Challenge
from redblue.models import RedBlueChallenge
from tests.challenges.test_admin_challenges import ADD, admin_client, form_data
from tests.redblue.test_admin import ADD as RED_BLUE_ADD
from tests.redblue.test_admin import form as red_blue_form

pytestmark = pytest.mark.django_db


def test_the_defence_layers_are_edited_without_json(creator, workspace):
    client = admin_client(creator)
    page = client.get(ADD).content.decode()
    assert 'name="input_filter_terms"' in page and 'name="defences"' not in page

    saved = client.post(
        ADD,
        form_data(
            workspace,
            answer_mode="guess",
            success_pattern="",
            system_prompt="The password is {{secret}}.",
            new_secret_name="opal",
            new_secret_value="OPAL",
            input_filter_on="on",
            input_filter_terms="password\n  secret word \n",
            input_filter_message="Not that.",
            output_guard_on="on",
            llm_check_on="on",
            llm_check_judge_model="offline/reviewer",
        ),
    )

    assert saved.status_code == 302, saved.context["adminform"].form.errors
    challenge = Challenge.objects.get()
    assert challenge.defences == [
        {"type": "input_filter", "terms": ["password", "secret word"], "message": "Not that."},
        {"type": "output_guard"},
        {"type": "llm_check", "judge_config": {"judge_model": "offline/reviewer"}},
    ]
    edit = client.get(f"/admin/challenges/challenge/{challenge.pk}/change/").content.decode()
    assert "password\nsecret word</textarea>" in edit
    assert re.search(r'<input[^>]*name="output_guard_on"[^>]*checked', edit)


def test_red_blue_banned_terms_are_typed_one_a_line(client, creator, workspace):
    client.force_login(creator)

    saved = client.post(RED_BLUE_ADD, red_blue_form(workspace, banned_terms="banana\ncheap trick"))

    assert saved.status_code == 302, saved.context["adminform"].form.errors
    challenge = RedBlueChallenge.objects.get(name="Admin made")
    assert challenge.banned_terms == ["banana", "cheap trick"]
    page = client.get(f"/admin/redblue/redbluechallenge/{challenge.id}/change/").content.decode()
    assert "banana\ncheap trick</textarea>" in page
    assert "Defence picked for a new attack" in page
    assert "round robin: the one paired longest ago" in page


def test_saving_in_the_editor_keeps_what_it_does_not_show(creator, workspace):
    from challenges.services.secrets import secret_create
    from tests.factories import make_challenge

    secret_create(workspace=workspace, name="opal", value="OPAL")
    layers = [
        {"type": "input_filter", "terms": ["password"], "message": "No.", "note": "kept"},
        {"type": "input_filter", "pattern": "(?i)pass\\s*word"},
        {"type": "llm_check", "judge_config": {"judge_model": "offline/r", "temperature": 0}},
    ]
    challenge = make_challenge(
        workspace=workspace,
        system_prompt="The password is {{secret}}.",
        secret_ref="opal",
        answer_mode="guess",
        defences=layers,
    )
    client = admin_client(creator)
    url = f"/admin/challenges/challenge/{challenge.pk}/change/"
    data = form_data(
        workspace,
        name=challenge.name,
        slug=challenge.slug,
        system_prompt="The password is {{secret}}.",
        secret_ref="opal",
        answer_mode="guess",
        success_pattern="",
        input_filter_on="on",
        input_filter_terms="password\nsecret",
        input_filter_message="No.",
        llm_check_on="on",
        llm_check_judge_model="offline/reviewer",
    )

    saved = client.post(url, data)

    assert saved.status_code == 302, saved.context["adminform"].form.errors
    challenge.refresh_from_db()
    assert challenge.defences == [
        {"type": "input_filter", "terms": ["password", "secret"], "message": "No.",
         "note": "kept"},
        {"type": "input_filter", "pattern": "(?i)pass\\s*word"},
        {"type": "llm_check",
         "judge_config": {"temperature": 0, "judge_model": "offline/reviewer"}},
    ]  # fmt: skip
