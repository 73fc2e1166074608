import re

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from players.models import PlayerProfile, Workspace


@pytest.fixture
def browser():
    return Client(enforce_csrf_checks=True)


def _csrf(browser, url: str) -> str:
    response = browser.get(url)
    assert response.status_code == 200
    return browser.cookies["csrftoken"].value


def _link_in_last_mail(path_prefix: str) -> str:
    match = re.search(rf"https?://[^/\s]+({re.escape(path_prefix)}\S+)", mail.outbox[-1].body)
    assert match, mail.outbox[-1].body
    return match.group(1)


def _sign_up(browser, email="new@example.com", name="Ada"):
    token = _csrf(browser, "/accounts/signup/")
    return browser.post(
        "/accounts/signup/",
        {
            "csrfmiddlewaretoken": token,
            "email": email,
            "name": name,
            "password1": "a-long-pass-phrase-7",
            "password2": "a-long-pass-phrase-7",
        },
    )


def test_the_sign_up_page_is_in_the_site_layout(browser, db):
    response = browser.get("/accounts/signup/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>" in html and "Prompt Hacking Challenges</title>" in html
    assert 'href="/"' in html  # the site's header from base.html
    assert 'name="name"' in html and 'name="email"' in html
    assert "csrfmiddlewaretoken" in html


def test_signing_up_creates_a_profile_and_mails_a_confirmation_link(browser, db):
    response = _sign_up(browser)

    assert response.status_code == 302
    user = get_user_model().objects.get(email="new@example.com")
    assert PlayerProfile.objects.get(account=user).display_name == "Ada"
    assert not Workspace.objects.exists()
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["new@example.com"]
    assert "Prompt Hacking Challenges" in mail.outbox[0].subject


def test_the_emailed_link_confirms_the_address(browser, db):
    _sign_up(browser)
    link = _link_in_last_mail("/accounts/confirm-email/")
    visitor = Client(enforce_csrf_checks=True)

    page = visitor.get(link)
    assert page.status_code == 200
    response = visitor.post(link, {"csrfmiddlewaretoken": visitor.cookies["csrftoken"].value})

    assert response.status_code == 302
    assert EmailAddress.objects.get(email="new@example.com").verified


def test_signing_up_without_a_name_is_refused(browser, db):
    response = _sign_up(browser, name="")

    assert response.status_code == 200
    assert not get_user_model().objects.exists()
    assert "This field is required." in response.content.decode()


def test_the_login_page_logs_a_player_in(browser, player):
    page = browser.get("/accounts/login/")
    assert page.status_code == 200
    assert "Send me a sign-in code" in page.content.decode()

    response = browser.post(
        "/accounts/login/",
        {
            "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
            "login": "player@example.com",
            "password": "correct-horse-9",
        },
    )

    assert response.status_code == 302
    assert browser.get("/profile/").status_code == 200


def test_the_login_page_refuses_a_wrong_password(browser, player):
    token = _csrf(browser, "/accounts/login/")

    response = browser.post(
        "/accounts/login/",
        {"csrfmiddlewaretoken": token, "login": "player@example.com", "password": "nope-nope-9"},
    )

    assert response.status_code == 200
    assert "not correct" in response.content.decode()
    assert browser.get("/profile/").status_code == 302


def test_the_login_code_pages_log_a_player_in(browser, player):
    token = _csrf(browser, "/accounts/login/code/")
    response = browser.post(
        "/accounts/login/code/", {"csrfmiddlewaretoken": token, "email": "player@example.com"}
    )
    assert response.status_code == 302
    code = re.search(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", mail.outbox[-1].body, re.M).group(1)

    response = browser.post(
        response["Location"],
        {"csrfmiddlewaretoken": browser.cookies["csrftoken"].value, "code": code},
    )

    assert response.status_code == 302
    assert browser.get("/profile/").status_code == 200


def test_the_password_reset_page_mails_a_reset_link_that_works(browser, player):
    token = _csrf(browser, "/accounts/password/reset/")
    browser.post(
        "/accounts/password/reset/", {"csrfmiddlewaretoken": token, "email": "player@example.com"}
    )
    link = _link_in_last_mail("/accounts/password/reset/key/")

    form = browser.get(link, follow=True)
    assert form.status_code == 200
    response = browser.post(
        form.redirect_chain[-1][0] if form.redirect_chain else link,
        {
            "csrfmiddlewaretoken": browser.cookies["csrftoken"].value,
            "password1": "a-brand-new-phrase-8",
            "password2": "a-brand-new-phrase-8",
        },
    )

    assert response.status_code == 302
    player.refresh_from_db()
    assert player.check_password("a-brand-new-phrase-8")
