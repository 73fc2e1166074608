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


def test_creators_list_their_sessions_and_reach_the_transcripts(creator, workspace, outsider):
    from challenges.models import PlaySession
    from challenges.services.sessions import session_open
    from tests.factories import make_challenge, make_end_user

    challenge = make_challenge(workspace=workspace, mode="conversation")
    session = session_open(
        challenge=challenge, end_user=make_end_user(workspace=workspace, external_id="dify-ada")
    )
    client = admin_client(creator)
    listing = client.get("/admin/challenges/playsession/").content.decode()
    assert "dify-ada" in listing
    page = client.get(f"/admin/challenges/playsession/{session.pk}/change/").content.decode()
    assert f"/sessions/{session.pk}/" in page
    assert client.get(f"/sessions/{session.pk}/").status_code == 200
    rival = admin_client(outsider)
    assert rival.get(f"/admin/challenges/playsession/{session.pk}/change/").status_code in (
        302,
        404,
    )
    assert PlaySession.objects.count() == 1
