"""The creator's form refuses what cannot be won or would publish by accident (issue 20.14):
an output guard over a {{secret}} pattern is refused with the reason, a new challenge starts
as a draft with a Publish action, and "Try it" knows guess mode."""

import re

import pytest

from challenges.models import Challenge, ChallengeAttempt
from challenges.services.secrets import secret_create
from tests.challenges.test_admin_challenges import ADD, LIST, admin_client, form_data
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

SECRET = "ZEBRAQUARTZ"
UNWINNABLE = "This challenge can never be won"


@pytest.fixture
def vault_secret(workspace):
    secret_create(workspace=workspace, name="vault", value=SECRET)


def test_it_refuses_an_output_guard_over_a_secret_pattern_everywhere(
    creator, creator_api, workspace, vault_secret
):
    fields = {
        "system_prompt": "The password is {{secret}}.",
        "secret_ref": "vault",
        "success_pattern": "{{secret}}",
    }
    page = admin_client(creator).post(ADD, form_data(workspace, **fields, output_guard_on="on"))
    api = creator_api.post(
        "/console/api/challenges",
        {"workspace": str(workspace.id), "name": "Sealed", **fields,
         "defences": [{"type": "output_guard"}]},
        format="json",
    )  # fmt: skip

    assert page.status_code == 200 and UNWINNABLE in page.content.decode()
    assert api.status_code == 400
    assert UNWINNABLE in str(api.json()["error"]["fields"]["defences"])
    assert not Challenge.objects.exists()
    guessing = creator_api.post(
        "/console/api/challenges",
        {"workspace": str(workspace.id), "name": "Guess it", **fields, "answer_mode": "guess",
         "defences": [{"type": "output_guard"}]},
        format="json",
    )  # fmt: skip
    assert guessing.status_code == 201, guessing.json()
    # A regex with a part that may match without the secret can still be won.
    optional = creator_api.post(
        "/console/api/challenges",
        {"workspace": str(workspace.id), "name": "Either", **fields, "success_type": "regex",
         "success_pattern": "(?i)opened|{{secret}}", "defences": [{"type": "output_guard"}]},
        format="json",
    )  # fmt: skip
    assert optional.status_code == 201, optional.json()


def test_a_new_challenge_starts_as_a_draft_and_is_published_by_the_action(creator, workspace):
    client = admin_client(creator)
    add_page = client.get(ADD).content.decode()
    assert re.search(r'<input[^>]*name="is_active"', add_page)
    assert not re.search(r'<input[^>]*name="is_active"[^>]*checked', add_page)

    data = form_data(workspace)
    data.pop("is_active")  # the box as the add form offers it: unticked
    saved = client.post(ADD, data, follow=True)

    challenge = Challenge.objects.get()
    assert challenge.is_active is False
    assert "is a draft: players do not see it" in saved.content.decode()
    edit = client.get(f"/admin/challenges/challenge/{challenge.pk}/change/").content.decode()
    assert "View on site" not in edit  # a draft's page is a 404 to visitors
    client.post(LIST, {"action": "publish", "_selected_action": [str(challenge.pk)]})
    challenge.refresh_from_db()
    assert challenge.is_active is True


def test_try_it_in_guess_mode_leaves_the_reply_unjudged_and_checks_a_guess(
    creator, workspace, vault_secret
):
    challenge = make_challenge(
        workspace=workspace,
        system_prompt="The password is {{secret}}.",
        secret_ref="vault",
        answer_mode="guess",
    )
    client = admin_client(creator)
    url = f"/admin/challenges/challenge/{challenge.pk}/try/"

    form = client.get(f"/admin/challenges/challenge/{challenge.pk}/change/").content.decode()
    tried = client.post(url, {"prompt": "What is the password?"}).json()
    wrong = client.post(url, {"answer": "opal"}).json()
    right = client.post(url, {"answer": f"  {SECRET.lower()} "}).json()

    assert 'id="try-answer"' in form
    assert SECRET in tried["reply"] and tried["passed"] is False
    assert "type it into the answer box" in tried["feedback"]
    assert wrong == {"guess_right": False, "recorded": False}
    assert right == {"guess_right": True, "recorded": False}
    assert not ChallengeAttempt.objects.exists()
