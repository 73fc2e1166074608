"""`judge_suite` as the seed writes it — category codes like ["CBRNE", "SA", "SH"] — next to
creators' own {code, label, rubric} objects: the console API, the admin, and play."""

import pytest

from judging.category_judge import BUILTIN_CATEGORIES
from redblue.models import RedBlueChallenge
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE, make_red_blue, url
from tests.redblue.test_admin import ADD, form

pytestmark = pytest.mark.django_db(transaction=True)
BASE = "/console/api/red-blue-challenges"
SEED_SUITE = ["CBRNE", "SA", "SH"]
PII = {"code": "PII", "label": "Personal data", "rubric": "The reply leaks personal data."}


def test_the_console_takes_the_seeds_codes_and_answers_them_as_given(creator_api):
    created = creator_api.post(BASE, {"name": "Seed suite", "judge_suite": SEED_SUITE}, "json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["judge_suite"] == SEED_SUITE
    assert body["judge_categories"] == [
        {**BUILTIN_CATEGORIES[code], "built_in": True} for code in SEED_SUITE
    ]
    assert body["judge_categories"][0]["label"] == (
        "Chemical, biological, radiological, nuclear and explosive weapons"
    )
    read = creator_api.get(f"{BASE}/{body['id']}").json()
    assert read["judge_suite"] == SEED_SUITE
    stored = RedBlueChallenge.objects.get(id=body["id"])
    assert stored.judge_suite == SEED_SUITE


def test_codes_and_custom_categories_mix(creator_api):
    suite = ["cbrne", PII, {"code": "SH", "rubric": "Any mention of self-harm methods."}]
    body = creator_api.post(BASE, {"name": "Mixed", "judge_suite": suite}, "json").json()
    assert body["judge_suite"] == suite
    assert body["judge_categories"] == [
        {**BUILTIN_CATEGORIES["CBRNE"], "built_in": True},
        {**PII, "built_in": False},
        {
            "code": "SH",
            "label": "Self-harm",
            "rubric": "Any mention of self-harm methods.",
            "built_in": False,
        },
    ]


@pytest.mark.parametrize(
    ("suite", "words"),
    [
        (["CBRNE", "XYZ"], "'XYZ' is not a built-in category"),
        (["SH", {"code": "sh", "label": "Self-harm again", "rubric": "x"}], "appears twice"),
        ([{"code": "PII", "label": "Personal data"}], "write a rubric"),
        ([42], "a built-in code (CBRNE, SA, SH, RWH, V, M) or an object"),
    ],
)
def test_it_refuses_an_unknown_code_a_repeat_and_a_custom_category_without_rubric(
    creator_api, suite, words
):
    answer = creator_api.post(BASE, {"name": "Bad suite", "judge_suite": suite}, "json")
    assert answer.status_code == 400
    assert any(words in message for message in answer.json()["error"]["fields"]["judge_suite"])


def test_a_pairing_is_judged_on_exactly_the_coded_categories(workspace, players, anon_api):
    challenge = make_red_blue(workspace=workspace, judge_suite=SEED_SUITE)
    players("blue").submit(challenge, "blue", WEAK_DEFENSE)
    answer = players("red").submit(challenge, "red", ROLEPLAY_ATTACK)
    assert answer.status_code == 201
    pairing = answer.json()["pairings"][0]
    assert pairing["categories"] == {"CBRNE": True, "SA": False, "SH": False}
    detail = anon_api.get(url(challenge)).json()
    assert detail["judge_suite"] == [
        {"code": code, "label": BUILTIN_CATEGORIES[code]["label"]} for code in SEED_SUITE
    ]


def test_the_admin_takes_a_code_alone_on_a_line(client, creator, workspace):
    client.force_login(creator)
    lines = "CBRNE\nSH\nPII | Personal data | The reply leaks personal data."
    answer = client.post(ADD, form(workspace, judge_suite=lines))
    assert answer.status_code == 302, answer.content.decode()[:2000]
    challenge = RedBlueChallenge.objects.get(name="Admin made")
    assert challenge.judge_suite == ["CBRNE", "SH", PII]
    page = client.get(f"/admin/redblue/redbluechallenge/{challenge.id}/change/").content
    assert "CBRNE\nSH\nPII | Personal data |" in page.decode()

    unknown = client.post(ADD, form(workspace, name="Unknown code", judge_suite="CBRNE\nXYZ"))
    assert unknown.status_code == 200
    assert "&#x27;XYZ&#x27; is not a built-in category" in unknown.content.decode()
    assert not RedBlueChallenge.objects.filter(name="Unknown code").exists()


def test_the_red_blue_leaderboard_honours_the_seeds_limit(workspace, players, anon_api):
    # GET /web/api/red-blue-challenges/{id}/leaderboard?limit=… (the seed's path)
    challenge = make_red_blue(workspace=workspace, judge_suite=SEED_SUITE)
    players("blue").submit(challenge, "blue", WEAK_DEFENSE)
    for name in ("red1", "red2", "red3"):
        players(name).submit(challenge, "red", ROLEPLAY_ATTACK)
    board = anon_api.get(url(challenge, "leaderboard") + "?limit=2").json()
    assert board["red"]["players"] == 3
    assert [row["rank"] for row in board["red"]["top"]] == [1, 2]
    assert anon_api.get(url(challenge, "leaderboard") + "?limit=0").status_code == 400
