"""The creators' admin: the event feed and webhook endpoints of their own workspaces."""

import pytest
from django.test import Client, override_settings

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from notifications.models import WebhookEndpoint
from notifications.services import webhook_endpoint_create
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db


def _admin(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_lists_the_workspaces_events_and_hides_other_workspaces(creator, outsider, workspace):
    challenge = make_challenge(workspace=workspace, name="Vault")
    attempt_record(
        challenge=challenge,
        end_user=make_end_user(workspace=workspace, external_id="first"),
        verdict=Verdict(True, "ok"),
    )
    own = _admin(creator).get("/admin/notifications/event/")
    assert own.status_code == 200
    # Named and linked, not a bare id.
    assert f'<a href="/challenges/{challenge.slug}/">Vault</a>' in own.content.decode()
    other = _admin(outsider).get("/admin/notifications/event/")
    assert f"/challenges/{challenge.slug}/" not in other.content.decode()


# The test machine resolves no public names; the allow-list skips the lookup.
@override_settings(EGRESS_ALLOW_HOSTS=["example.com"])
def test_adding_an_endpoint_shows_its_secret_once(creator, workspace):
    client = _admin(creator)
    response = client.post(
        "/admin/notifications/webhookendpoint/add/",
        {
            "workspace": workspace.pk,
            "url": "https://example.com/hook",
            "events": ["challenge_first_blood"],  # a ticked box
            "active": "on",
            "deliveries-TOTAL_FORMS": "0",
            "deliveries-INITIAL_FORMS": "0",
        },
        follow=True,
    )
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.events == ["challenge_first_blood"]
    assert endpoint.secret in response.content.decode()
    page = client.get(f"/admin/notifications/webhookendpoint/{endpoint.pk}/change/")
    assert endpoint.secret not in page.content.decode()
    assert 'type="checkbox" name="events" value="challenge_first_blood"' in page.content.decode()


@override_settings(EGRESS_ALLOW_HOSTS=["example.com"])
def test_an_outsider_cannot_open_an_endpoint(outsider, workspace):
    endpoint = webhook_endpoint_create(workspace=workspace, url="https://example.com/hook")
    page = _admin(outsider).get(f"/admin/notifications/webhookendpoint/{endpoint.pk}/change/")
    assert page.status_code in (302, 403, 404)
