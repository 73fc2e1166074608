import hashlib
from io import StringIO

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from challenges.models import BridgeKey, Challenge, Secret
from players.models import Membership, PlayerProfile, Workspace

pytestmark = pytest.mark.django_db


def run(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out)
    return out.getvalue()


# --- createbridgekey ---------------------------------------------------------------------


@pytest.mark.parametrize("how", ["name", "slug"])
def test_it_prints_the_new_bridge_key_alone_on_the_last_line(workspace, how):
    output = run("createbridgekey", "--workspace", getattr(workspace, how), "--name", "dify prod")

    key = output.strip().splitlines()[-1]
    assert key.startswith("whsec_")
    stored = BridgeKey.objects.get(workspace=workspace)
    assert stored.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert stored.name == "dify prod"
    assert stored.revoked_at is None
    assert output.count(key) == 1


def test_it_refuses_an_unknown_workspace(workspace):
    with pytest.raises(CommandError, match="No workspace"):
        run("createbridgekey", "--workspace", "no-such-workspace")

    assert not BridgeKey.objects.exists()


# --- demo --------------------------------------------------------------------------------


def _row_counts() -> dict[str, int]:
    return {
        "users": get_user_model().objects.count(),
        "emails": EmailAddress.objects.count(),
        "profiles": PlayerProfile.objects.count(),
        "workspaces": Workspace.objects.count(),
        "memberships": Membership.objects.count(),
        "secrets": Secret.objects.count(),
        "challenges": Challenge.objects.count(),
    }


def _snapshot() -> dict[str, object]:
    return {
        "passwords": sorted(get_user_model().objects.values_list("email", "password")),
        "secrets": sorted(Secret.objects.values_list("name", "value", "updated_at")),
        "challenges": sorted(Challenge.objects.values_list("slug", "updated_at")),
    }


def test_it_loads_the_demo_once_however_often_it_runs():
    run("demo")
    counts, snapshot = _row_counts(), _snapshot()
    run("demo")

    assert _row_counts() == counts
    assert _snapshot() == snapshot
    assert counts["workspaces"] == 1
    assert counts["challenges"] >= 4


def test_it_creates_verified_demo_accounts_whose_credentials_it_prints():
    output = run("demo")

    User = get_user_model()
    creator = User.objects.get(email="demo-creator@example.com")
    player = User.objects.get(email="demo-player@example.com")
    assert creator.is_staff
    assert not player.is_staff
    assert Membership.objects.get(user=creator).role == "owner"
    assert EmailAddress.objects.get(user=creator).verified
    assert EmailAddress.objects.get(user=player).verified
    for user in (creator, player):
        line = next(
            line for line in output.splitlines() if user.email in line and "password" in line
        )
        assert user.check_password(line.split("password:")[1].strip())
    for path in ("/admin/", "/api/docs/"):
        assert path in output


def test_it_lists_the_demo_challenges_for_players():
    run("demo")

    response = APIClient().get("/web/api/challenges", {"limit": 200})

    assert response.status_code == 200
    listed = {item["slug"]: item for item in response.json()["results"]}
    demo = Challenge.objects.filter(workspace__name="Demo")
    assert set(demo.values_list("slug", flat=True)) <= set(listed)
    assert all(listed[challenge.slug]["is_open"] for challenge in demo)
    strategies = {challenge.scoring_strategy for challenge in demo}
    assert {"first", "fastest", "fewest_tokens"} <= strategies
    assert {"contains", "regex"} <= {challenge.success_type for challenge in demo}


def test_it_never_prints_the_demo_secret_values():
    first = run("demo")
    second = run("demo")

    values = list(Secret.objects.values_list("value", flat=True))
    assert values
    for value in values:
        assert value.casefold() not in first.casefold()
        assert value.casefold() not in second.casefold()


def test_it_resets_a_changed_demo_password_so_the_printed_one_works():
    run("demo")
    player = get_user_model().objects.get(email="demo-player@example.com")
    player.set_password("something-else-entirely")
    player.save()

    output = run("demo")

    player.refresh_from_db()
    printed = next(
        line for line in output.splitlines() if "password:" in line and player.email in line
    )
    assert player.check_password(printed.split("password:")[1].strip())
