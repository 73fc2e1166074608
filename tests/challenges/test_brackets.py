"""Brackets: a creator defines them, a player picks one (at sign-up, on the profile or over
the API) once, a creator may move a player; boards, the scoreboard, their APIs, pages and
CSV filter by `?bracket=`."""

import csv
import io

import pytest
from django.core import mail
from django.test import Client

from challenges.services.collections import collection_create, collection_set_challenges
from players.models import EndUser
from players.services import end_user_for_account
from tests.conftest import client_for
from tests.factories import make_challenge, make_player, record_win

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def brackets(workspace, creator_api):
    for name in ("Students", "Professionals"):
        created = creator_api.post("/console/api/brackets", {"name": name}, format="json")
        assert created.status_code == 201, created.json()
    return {row["slug"]: row for row in creator_api.get("/console/api/brackets").json()["results"]}


def test_creators_define_brackets_and_others_cannot(
    brackets, creator_api, outsider_api, viewer_api
):
    assert set(brackets) == {"students", "professionals"}
    again = creator_api.post("/console/api/brackets", {"name": "Students"}, format="json")
    assert again.status_code == 409
    assert viewer_api.post("/console/api/brackets", {"name": "X"}, format="json").status_code == 403
    assert outsider_api.get("/console/api/brackets?workspace=acme-red-team").status_code == 404
    students = brackets["students"]["id"]
    assert outsider_api.delete(f"/console/api/brackets/{students}").status_code == 404


def test_a_player_picks_a_bracket_once_and_a_creator_moves_them(
    workspace, brackets, creator_api, outsider_api
):
    account = make_player()
    api = client_for(account)
    chosen = api.post(
        "/web/api/me/brackets",
        {"workspace": workspace.slug, "bracket": "students"},
        format="json",
    )
    assert chosen.status_code == 200 and chosen.json()["bracket"] == "students"
    switched = api.post(
        "/web/api/me/brackets",
        {"workspace": workspace.slug, "bracket": "professionals"},
        format="json",
    )
    assert switched.status_code == 409
    assert api.get("/web/api/me/brackets").json()["results"][0]["bracket"] == "students"

    end_user = EndUser.objects.get(account=account)
    assert (
        outsider_api.patch(
            f"/console/api/players/{end_user.id}/bracket",
            {"bracket": "professionals"},
            format="json",
        ).status_code
        == 404
    )
    moved = creator_api.patch(
        f"/console/api/players/{end_user.id}/bracket", {"bracket": "professionals"}, format="json"
    )
    assert moved.status_code == 200 and moved.json()["bracket"] == "professionals"


def test_sign_up_offers_the_brackets(workspace, brackets, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = "none"
    form = Client().get("/accounts/signup/").content.decode()
    assert "Acme Red Team: Students" in form
    students = brackets["students"]["id"]
    signed_up = Client().post(
        "/accounts/signup/",
        {
            "email": "newbie@example.com",
            "name": "Newbie",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
            "bracket": students,
        },
    )
    assert signed_up.status_code == 302, signed_up.content.decode()[:2000]
    end_user = EndUser.objects.get(account__email="newbie@example.com")
    assert end_user.bracket.slug == "students"
    assert mail.outbox is not None


def test_boards_and_the_scoreboard_filter_by_bracket(workspace, brackets, creator_api):
    challenge = make_challenge(workspace=workspace, name="Split")
    collection = collection_create(
        workspace=workspace, user=None, name="Split Run", is_public=True, scoring_strategy="sum"
    )
    collection_set_challenges(collection=collection, challenge_ids=[challenge.id])
    for name, bracket in (("stu", "students"), ("pro", "professionals"), ("none", None)):
        account = make_player(f"{name}@example.com")
        end_user = end_user_for_account(workspace=workspace, account=account)
        end_user.display_name = name
        end_user.save()
        if bracket:
            client_for(account).post(
                "/web/api/me/brackets",
                {"workspace": workspace.slug, "bracket": bracket},
                format="json",
            )
        record_win(challenge, end_user)

    def names(body):
        return [row["player"] for row in body["entries"]]

    anonymous = Client()
    board = f"/web/api/challenges/{challenge.id}/leaderboard"
    assert sorted(names(anonymous.get(board).json())) == ["none", "pro", "stu"]
    filtered = anonymous.get(board + "?bracket=students").json()
    assert names(filtered) == ["stu"] and filtered["bracket"] == "students"
    assert anonymous.get(board + "?bracket=nope").status_code == 404
    collection_board = f"/web/api/challenge-collections/{collection.id}/leaderboard"
    assert names(anonymous.get(collection_board + "?bracket=professionals").json()) == ["pro"]
    scoreboard = f"/web/api/scoreboard/{workspace.slug}"
    assert names(anonymous.get(scoreboard + "?bracket=students").json()) == ["stu"]
    exported = anonymous.get(scoreboard + "?bracket=professionals&format=csv").content.decode()
    assert [row["player"] for row in csv.DictReader(io.StringIO(exported))] == ["pro"]
    live = creator_api.get("/console/api/scoreboard?bracket=students").json()
    assert names(live) == ["stu"]

    page = anonymous.get(f"/scoreboard/{workspace.slug}/?bracket=students").content.decode()
    assert ">stu</a>" in page and ">pro</a>" not in page
    assert 'href="?bracket=professionals"' in page
    challenge_page = anonymous.get(f"/challenges/{challenge.slug}/?bracket=professionals")
    rows = challenge_page.content.decode().split('id="leaderboard"', 1)[1]
    assert ">pro</a>" in rows and ">stu</a>" not in rows


def test_a_creator_moves_a_player_in_the_admin_and_an_outsider_cannot(
    workspace, brackets, creator, outsider
):
    end_user = end_user_for_account(workspace=workspace, account=make_player())
    professionals = brackets["professionals"]["id"]
    change = f"/admin/players/enduser/{end_user.pk}/change/"
    admin = Client()
    admin.force_login(creator)
    form = admin.get(change).content.decode()
    assert "Professionals" in form
    saved = admin.post(change, {"bracket": professionals})
    assert saved.status_code == 302
    end_user.refresh_from_db()
    assert end_user.bracket.slug == "professionals"

    rival = Client()
    rival.force_login(outsider)
    assert rival.post(change, {"bracket": ""}).status_code in (302, 403, 404)
    end_user.refresh_from_db()
    assert end_user.bracket.slug == "professionals"


def test_pages_with_an_unknown_bracket_or_players_filter_answer_not_a_500(workspace, brackets):
    challenge = make_challenge(workspace=workspace, name="Unknown filters")
    anonymous = Client()
    for path in (f"/scoreboard/{workspace.slug}/", f"/challenges/{challenge.slug}/"):
        assert anonymous.get(path + "?bracket=nope").status_code == 404
        assert anonymous.get(path + "?players=robots").status_code == 200
