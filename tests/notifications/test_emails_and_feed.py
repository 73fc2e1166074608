"""Email to players who opted in (with a working unsubscribe link), the header list of a
player's events marked read, and the creators' events feed."""

import re

import pytest
from django.core import mail

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from players.models import PlayerProfile
from players.services import end_user_for_account, profile_create
from tests.factories import make_challenge, make_end_user, make_player

pytestmark = pytest.mark.django_db(transaction=True)


def _player(workspace, email, **preferences):
    account = make_player(email)
    profile_create(account=account, display_name=email.split("@")[0])
    PlayerProfile.objects.filter(account=account).update(**preferences)
    return account, end_user_for_account(workspace=workspace, account=account)


def _attempt(challenge, end_user, passed, elapsed_ms=500):
    attempt_record(
        challenge=challenge,
        end_user=end_user,
        verdict=Verdict(passed, "ok"),
        elapsed_ms=elapsed_ms,
    )


def test_it_emails_only_players_who_opted_in_and_the_link_unsubscribes(client, workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    _, keen = _player(workspace, "keen@example.com")
    _, quiet = _player(workspace, "quiet@example.com", notify_on_first_blood=False)
    for end_user in (keen, quiet):
        _attempt(challenge, end_user, passed=False)

    _attempt(challenge, make_end_user(workspace=workspace, external_id="solver"), passed=True)

    assert [message.to for message in mail.outbox] == [["keen@example.com"]]
    assert mail.outbox[0].subject == (
        f"First blood: “{challenge.name}” was solved for the first time"
    )
    page = re.search(r"http://\S+/challenges/\S+/", mail.outbox[0].body).group(0)
    assert page.endswith(f"/challenges/{challenge.slug}/")
    assert client.get("/" + page.split("://", 1)[1].split("/", 1)[1]).status_code == 200
    link = re.search(r"http://\S+/notifications/unsubscribe/\S+/", mail.outbox[0].body).group(0)
    path = link.split("://", 1)[1].split("/", 1)[1]
    assert client.get("/" + path).status_code == 200
    assert "Unsubscribe" in client.get("/" + path).content.decode()
    assert client.post("/" + path).status_code == 200
    assert PlayerProfile.objects.get(account=keen.account).notify_on_first_blood is False
    assert client.post("/notifications/unsubscribe/forged/").status_code == 400


def test_the_previous_holder_gets_a_record_beaten_email_unless_opted_out(workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    _, holder = _player(workspace, "holder@example.com", notify_on_first_blood=False)
    _, other = _player(workspace, "other@example.com", notify_on_record_beaten=False)
    _attempt(challenge, holder, passed=True, elapsed_ms=800)
    _attempt(challenge, other, passed=True, elapsed_ms=300)
    _attempt(challenge, make_end_user(workspace=workspace, external_id="x"), True, 100)

    assert [(m.to, m.subject) for m in mail.outbox] == [
        (["holder@example.com"], f"Your record on “{challenge.name}” was beaten")
    ]


def test_the_page_header_lists_a_players_events_until_marked_read(client, workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    account, holder = _player(workspace, "reader@example.com")
    _attempt(challenge, holder, passed=True, elapsed_ms=800)
    _attempt(challenge, make_end_user(workspace=workspace, external_id="fast"), True, 100)
    client.force_login(account)

    assert 'hx-get="/notifications/header/"' in client.get("/profile/").content.decode()
    header = client.get("/notifications/header/").content.decode()
    assert '<span class="notification-count">1</span>' in header
    assert f"Your record on “{challenge.name}” was beaten" in header
    link = re.search(r'<a href="([^"]+)">Your record', header).group(1)
    assert link == f"/challenges/{challenge.slug}/"
    assert client.get(link).status_code == 200

    assert client.post("/notifications/read/", {"next": "https://evil.example/"}).url == "/"
    header = client.get("/notifications/header/").content.decode()
    assert 'class="notification-count"' not in header
    assert f"Your record on “{challenge.name}” was beaten" in header


def test_the_console_events_feed_is_kept_to_the_callers_workspaces(
    creator_api, outsider_api, workspace
):
    challenge = make_challenge(workspace=workspace)
    _attempt(challenge, make_end_user(workspace=workspace, external_id="blood"), True)

    events = creator_api.get("/console/api/events").json()["results"]
    assert [event["type"] for event in events] == ["challenge_first_blood"]
    assert events[0]["payload"]["challenge_id"] == str(challenge.id)
    assert outsider_api.get("/console/api/events").json()["results"] == []
    assert outsider_api.get(f"/console/api/events?workspace={workspace.id}").status_code == 404
