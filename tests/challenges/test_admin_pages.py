import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from challenges.services.attempts import attempt_record
from challenges.services.bridge_keys import bridge_key_create
from challenges.services.secrets import secret_create
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db

MODELS = (
    "challenges/challenge",
    "challenges/secret",
    "challenges/challengeattempt",
    "challenges/challengecollection",
    "challenges/bridgekey",
    "players/workspace",
    "players/enduser",
)


@pytest.fixture
def rows(workspace, creator):
    challenge = make_challenge(workspace=workspace)
    end_user = make_end_user(workspace=workspace)
    client = Client()
    client.force_login(creator)
    client.post(
        "/admin/challenges/challengecollection/add/",
        {
            "workspace": str(workspace.pk),
            "name": "Pack",
            "scoring_strategy": "sum",
            "is_public": "on",
            "theme": "{}",
            "scoring_config": "{}",
            "items-TOTAL_FORMS": "0",
            "items-INITIAL_FORMS": "0",
        },
    )
    return {
        "challenges/challenge": challenge,
        "challenges/secret": secret_create(workspace=workspace, name="vault", value="v-1"),
        "challenges/challengeattempt": attempt_record(
            challenge=challenge, end_user=end_user, verdict=Verdict(passed=True)
        ),
        "challenges/challengecollection": workspace.challenge_collections.get(),
        "challenges/bridgekey": bridge_key_create(workspace=workspace)[0],
        "players/workspace": workspace,
        "players/enduser": end_user,
    }


@pytest.mark.parametrize("who", ["creator", "superuser"])
def test_it_opens_every_list_add_and_change_page(who, creator, rows):
    user = creator
    if who == "superuser":
        user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-1234x")
    client = Client()
    client.force_login(user)

    assert client.get("/admin/").status_code == 200
    for model in MODELS:
        assert client.get(f"/admin/{model}/").status_code == 200, model
        assert client.get(f"/admin/{model}/{rows[model].pk}/change/").status_code == 200, model
    for model in ("challenges/challenge", "challenges/secret", "challenges/bridgekey"):
        assert client.get(f"/admin/{model}/add/").status_code == 200, model
    for model in ("challenges/challengeattempt", "players/enduser"):
        assert client.get(f"/admin/{model}/add/").status_code == 403, model
