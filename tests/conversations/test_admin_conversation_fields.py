"""The admin's challenge form has the conversation settings as plain fields (no JSON)."""

import pytest

from challenges.models import Challenge
from tests.challenges.test_admin_challenges import ADD, admin_client, form_data

pytestmark = pytest.mark.django_db


def test_a_creator_makes_a_conversation_level_in_the_admin(creator, workspace):
    client = admin_client(creator)
    page = client.get(ADD).content.decode()
    assert "Kind of play" in page
    for name in ("mode", "max_turns", "judge_scope", "session_token_budget"):
        assert f'name="{name}"' in page

    saved = client.post(
        ADD,
        form_data(
            workspace,
            mode="conversation",
            max_turns="4",
            judge_scope="transcript",
            session_token_budget="900",
        ),
    )
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    challenge = Challenge.objects.get()
    assert (challenge.mode, challenge.max_turns, challenge.judge_scope) == (
        "conversation",
        4,
        "transcript",
    )
    assert challenge.session_token_budget == 900


def test_the_form_refuses_bad_conversation_settings(creator, workspace):
    client = admin_client(creator)
    refused = client.post(ADD, form_data(workspace, mode="conversation", max_turns="0"))
    assert refused.status_code == 200
    assert "max_turns" in refused.context["adminform"].form.errors
    guess = client.post(
        ADD,
        form_data(
            workspace,
            mode="conversation",
            answer_mode="guess",
            success_pattern="",
            system_prompt="The password is {{secret}}.",
            new_secret_name="opal",
            new_secret_value="OPAL",
        ),
    )
    assert guess.status_code == 200
    assert "answer_mode" in guess.context["adminform"].form.errors
    assert not Challenge.objects.exists()
