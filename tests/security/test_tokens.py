"""Issue 8, finding 6: API tokens expire, die with a password change or a logout, and a
player can list and revoke them on the profile page."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from players.models import ApiToken
from players.services import creator_create, token_issue

pytestmark = pytest.mark.django_db

ME = "/web/api/me"
CONSOLE = "/console/api/challenges"


def bearer(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def web_login(player, password="correct-horse-9") -> str:
    response = APIClient().post(
        "/web/api/login", {"email": player.email, "password": password}, format="json"
    )
    assert response.status_code == 200, response.json()
    return response.json()["access_token"]


def test_it_stores_only_a_hash_of_the_token(player):
    raw = web_login(player)
    row = ApiToken.objects.get(user=player)
    assert raw not in {row.key_hash, row.prefix, row.name}
    assert row.key_hash != raw and len(row.key_hash) == 64


def test_a_token_expires_after_the_configured_days(player, settings):
    settings.API_TOKEN_TTL_DAYS = 7
    before = timezone.now()
    raw = web_login(player)
    expires_at = ApiToken.objects.get(user=player).expires_at
    assert before + timedelta(days=7) <= expires_at <= timezone.now() + timedelta(days=7)
    assert bearer(raw).get(ME).status_code == 200

    ApiToken.objects.filter(user=player).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = bearer(raw).get(ME)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_the_default_lifetime_is_thirty_days(player):
    web_login(player)
    lifetime = ApiToken.objects.get(user=player).expires_at - timezone.now()
    assert timedelta(days=29, hours=23) < lifetime <= timedelta(days=30)


@pytest.mark.parametrize("url", ["/web/api/logout", "/console/api/logout"])
def test_logout_revokes_the_token_sent_and_only_that_one(creator, url):
    sent = token_issue(user=creator)
    kept = token_issue(user=creator)
    response = bearer(sent).post(url)
    assert response.status_code == 204
    assert bearer(sent).get(CONSOLE).status_code == 401
    assert bearer(sent).post(url).status_code == 401
    assert bearer(kept).get(CONSOLE).status_code == 200


@pytest.mark.parametrize("url", ["/web/api/logout", "/console/api/logout"])
def test_logout_without_a_token_is_refused(anon_api, url):
    response = anon_api.post(url)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_a_password_changed_on_the_allauth_page_revokes_every_token(player):
    tokens = [web_login(player), token_issue(user=player)]
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(player)
    browser.get("/accounts/password/change/")
    response = browser.post(
        "/accounts/password/change/",
        {
            "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
            "oldpassword": "correct-horse-9",
            "password1": "a-brand-new-phrase-8",
            "password2": "a-brand-new-phrase-8",
        },
    )
    assert response.status_code == 302
    for raw in tokens:
        assert bearer(raw).get(ME).status_code == 401
    assert bearer(web_login(player, "a-brand-new-phrase-8")).get(ME).status_code == 200


def test_a_password_reset_by_mail_revokes_every_token(player):
    raw = web_login(player)
    browser = Client(enforce_csrf_checks=True)
    browser.get("/accounts/password/reset/")
    browser.post(
        "/accounts/password/reset/",
        {"csrfmiddlewaretoken": browser.cookies["csrftoken"].value, "email": player.email},
    )
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/key/\S+)", mail.outbox[-1].body)
    form = browser.get(link.group(1), follow=True)
    response = browser.post(
        form.redirect_chain[-1][0],
        {
            "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
            "password1": "a-brand-new-phrase-8",
            "password2": "a-brand-new-phrase-8",
        },
    )
    assert response.status_code == 302
    assert bearer(raw).get(ME).status_code == 401


def test_a_password_set_in_the_admin_revokes_every_token(player):
    raw = web_login(player)
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "root-pass-9")
    browser = Client()
    browser.force_login(admin)
    response = browser.post(
        f"/admin/auth/user/{player.pk}/password/",
        {"password1": "a-brand-new-phrase-8", "password2": "a-brand-new-phrase-8"},
    )
    assert response.status_code == 302
    assert bearer(raw).get(ME).status_code == 401


def test_a_password_set_by_createcreator_revokes_every_token(creator, workspace):
    raw = token_issue(user=creator)
    creator_create(
        email=creator.email, password="a-brand-new-phrase-8", workspace_name=workspace.name
    )
    assert bearer(raw).get(CONSOLE).status_code == 401


def test_saving_a_user_without_a_new_password_keeps_the_tokens(player):
    raw = web_login(player)
    player.first_name = "Grace"
    player.save()
    player.check_password("correct-horse-9")
    assert bearer(raw).get(ME).status_code == 200


@pytest.fixture
def browser(player):
    client = Client(enforce_csrf_checks=True)
    client.force_login(player)
    return client


def test_the_profile_page_lists_live_tokens_with_their_dates(browser, player):
    used = web_login(player)
    bearer(used).get(ME)
    token_issue(user=player, name="laptop")
    expired = token_issue(user=player, name="old")
    ApiToken.objects.filter(prefix=expired[:10]).update(
        expires_at=timezone.now() - timedelta(days=1)
    )

    html = browser.get("/profile/").content.decode()

    section = html[html.index("API tokens") :]
    assert used[:10] in section and "(laptop)" in section
    assert expired[:10] not in section
    assert section.count(">Revoke</button>") == 2
    assert "never" in section  # the laptop token was never used
    assert used not in html  # only the prefix is ever shown


def test_the_profile_page_revokes_a_token(browser, player):
    raw = web_login(player)
    token = ApiToken.objects.get(user=player)
    browser.get("/profile/")
    response = browser.post(
        f"/profile/tokens/{token.pk}/revoke",
        {"csrfmiddlewaretoken": browser.cookies["csrftoken"].value},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/profile/"
    assert "The token is revoked" in response.content.decode()
    assert bearer(raw).get(ME).status_code == 401
    assert not ApiToken.objects.filter(pk=token.pk).exists()


def test_revoking_needs_the_csrf_token_and_a_post(browser, player):
    raw = web_login(player)
    token = ApiToken.objects.get(user=player)
    assert browser.post(f"/profile/tokens/{token.pk}/revoke").status_code == 403
    assert browser.get(f"/profile/tokens/{token.pk}/revoke").status_code == 405
    assert bearer(raw).get(ME).status_code == 200


def test_a_player_cannot_revoke_someone_elses_token(browser, creator):
    raw = token_issue(user=creator)
    token = ApiToken.objects.get(user=creator)
    browser.get("/profile/")
    response = browser.post(
        f"/profile/tokens/{token.pk}/revoke",
        {"csrfmiddlewaretoken": browser.cookies["csrftoken"].value},
        follow=True,
    )
    assert "already revoked" in response.content.decode()
    assert bearer(raw).get(CONSOLE).status_code == 200


def test_anonymous_visitors_cannot_revoke(creator):
    token_issue(user=creator)
    token = ApiToken.objects.get(user=creator)
    response = Client().post(f"/profile/tokens/{token.pk}/revoke")
    assert response.status_code == 302
    assert ApiToken.objects.filter(pk=token.pk).exists()
