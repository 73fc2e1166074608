from io import StringIO

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from players.models import Membership, Workspace

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("createcreator", *args, stdout=out)
    return out.getvalue()


def test_it_creates_a_staff_user_who_owns_a_new_workspace():
    output = run(
        "--email", "Alice@Example.com", "--password", "tangerine-kite-42", "--workspace", "Red Team"
    )

    user = get_user_model().objects.get(email="alice@example.com")
    assert user.is_staff
    assert not user.is_superuser
    assert user.check_password("tangerine-kite-42")
    workspace = Workspace.objects.get(name="Red Team")
    assert workspace.slug == "red-team"
    membership = Membership.objects.get(user=user, workspace=workspace)
    assert membership.role == "owner"
    assert EmailAddress.objects.get(user=user).verified
    assert "alice@example.com" in output
    assert "Red Team" in output


def test_it_joins_an_existing_workspace_instead_of_making_another(workspace):
    run(
        "--email",
        "bob@example.com",
        "--password",
        "tangerine-kite-42",
        "--workspace",
        workspace.name,
    )

    assert Workspace.objects.filter(name=workspace.name).count() == 1
    assert Membership.objects.filter(workspace=workspace, user__email="bob@example.com").exists()


def test_it_updates_the_password_when_run_again():
    run("--email", "carol@example.com", "--password", "tangerine-kite-42", "--workspace", "W")
    output = run(
        "--email", "carol@example.com", "--password", "another-kite-77", "--workspace", "W"
    )

    users = get_user_model().objects.filter(email="carol@example.com")
    assert users.count() == 1
    assert users.get().check_password("another-kite-77")
    assert Membership.objects.filter(user=users.get()).count() == 1
    assert "Updated" in output


@pytest.mark.parametrize(
    ("email", "password", "workspace", "message"),
    [
        ("not-an-email", "tangerine-kite-42", "W", "not a valid email"),
        ("", "tangerine-kite-42", "W", "not a valid email"),
        ("dave@example.com", "", "W", "must not be empty"),
        ("dave@example.com", "short", "W", "too short"),
        ("dave@example.com", "password123", "W", "too common"),
        ("dave@example.com", "12345678901", "W", "entirely numeric"),
        ("dave@example.com", "tangerine-kite-42", "   ", "--workspace"),
    ],
)
def test_it_refuses_bad_input_and_writes_nothing(email, password, workspace, message):
    with pytest.raises(CommandError, match=message):
        run("--email", email, "--password", password, "--workspace", workspace)

    assert not get_user_model().objects.exists()
    assert not Workspace.objects.exists()
