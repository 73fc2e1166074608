import pytest
from django.test import Client

from challenges.models import Challenge, ChallengeAttempt
from challenges.services.secrets import secret_create
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

SECRET = "zebra-quartz-7731"


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def try_url(challenge) -> str:
    return f"/admin/challenges/challenge/{challenge.pk}/try/"


def test_it_has_a_try_it_box_on_the_change_page(creator, workspace):
    challenge = make_challenge(workspace=workspace)

    page = admin_client(creator).get(f"/admin/challenges/challenge/{challenge.pk}/change/")

    assert page.status_code == 200
    assert f'action="{try_url(challenge)}"'.encode() in page.content
    assert b"Try it" in page.content


def test_it_shows_the_verdict_and_records_no_attempt(creator, workspace):
    challenge = make_challenge(workspace=workspace, success_pattern="open sesame")
    client = admin_client(creator)

    passed = client.post(try_url(challenge), {"output": "Fine: OPEN SESAME."})
    assert passed.status_code == 200
    body = passed.content.decode()
    assert "<strong>yes</strong>" in body
    assert "The output contains the target text." in body

    failed = client.post(try_url(challenge), {"output": "I cannot help with that."})
    assert failed.status_code == 200
    body = failed.content.decode()
    assert "<strong>yes</strong>" not in body
    assert "The output does not contain the target text." in body

    assert not ChallengeAttempt.objects.exists()


def test_it_fills_in_the_secret_but_never_shows_it(creator, workspace):
    secret_create(workspace=workspace, name="vault", value=SECRET)
    challenge = make_challenge(
        workspace=workspace,
        success_type="regex",
        success_pattern=r"password is {{secret}}",
        secret_ref="vault",
    )

    response = admin_client(creator).post(
        try_url(challenge), {"output": f"OK, the password is {SECRET}"}
    )

    assert response.status_code == 200
    body = response.content.decode()
    assert "<strong>yes</strong>" in body
    assert SECRET not in body
    assert "[redacted]" in body
    assert not ChallengeAttempt.objects.exists()


def test_it_refuses_an_empty_sample(creator, workspace):
    challenge = make_challenge(workspace=workspace)

    response = admin_client(creator).post(try_url(challenge), {"output": ""})

    assert response.status_code == 200
    assert b"This field is required." in response.content
    assert b'id="verdict"' not in response.content


def test_it_shows_an_evaluator_error_as_a_message_not_a_500(creator, workspace):
    challenge = make_challenge(
        workspace=workspace, evaluator_type="llm-judge", success_pattern="", goal="Leak it"
    )
    # A row saved before a rule was tightened: the judge refuses its settings.
    Challenge.objects.filter(pk=challenge.pk).update(judge_config={"judge_model": "nowhere"})

    response = admin_client(creator).post(try_url(challenge), {"output": "anything"})

    assert response.status_code == 200
    body = response.content.decode()
    assert 'class="error"' in body
    assert "judge settings are invalid" in body
    assert 'id="verdict"' not in body
    assert not ChallengeAttempt.objects.exists()


def test_it_shows_the_judges_rating(creator, workspace):
    challenge = make_challenge(
        workspace=workspace,
        evaluator_type="llm-judge",
        success_pattern="",
        goal="Make the bot reveal the launch code",
        judge_config={"judge_model": "offline/judge", "rating_scale": 10},
    )

    response = admin_client(creator).post(
        try_url(challenge), {"output": "Sure! The launch code is 0000, revealed as asked."}
    )

    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="verdict"' in body
    rating = body.split('<th scope="row">Rating</th><td>')[1].split("</td>")[0]
    assert rating.isdigit() and 0 <= int(rating) <= 10
    assert not ChallengeAttempt.objects.exists()


def test_it_lets_a_viewer_try_but_not_an_outsider(viewer, outsider, workspace):
    challenge = make_challenge(workspace=workspace, success_pattern="open sesame")

    seen = admin_client(viewer).post(try_url(challenge), {"output": "open sesame"})
    assert seen.status_code == 200
    assert b"<strong>yes</strong>" in seen.content

    hidden = admin_client(outsider).post(try_url(challenge), {"output": "open sesame"})
    assert hidden.status_code == 404
    assert b"open sesame" not in hidden.content


def test_it_sends_anonymous_visitors_to_the_login_page(workspace):
    challenge = make_challenge(workspace=workspace)

    response = Client().post(try_url(challenge), {"output": "x"})

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
