"""Create (or update) a creator: a staff account that owns a workspace."""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email

from core.errors import ApplicationError
from players.services import creator_create


class Command(BaseCommand):
    help = (
        "Create a creator (staff) account that owns WORKSPACE, creating the workspace by "
        "name when it does not exist. Rerunning it for the same email sets the password."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True)
        parser.add_argument("--password", required=True)
        parser.add_argument("--workspace", required=True, help="Workspace name.")

    def handle(self, *args: Any, email: str, password: str, workspace: str, **options: Any) -> None:
        email = (email or "").strip()
        workspace = (workspace or "").strip()
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"'{email}' is not a valid email address.")
        if not workspace:
            raise CommandError("--workspace must name a workspace.")
        if not password:
            raise CommandError("--password must not be empty.")
        User = get_user_model()
        existing = User.objects.filter(email__iexact=email).first()
        # Similarity checks need the account's attributes, even before it exists.
        candidate = existing or User(username=email[:150], email=email)
        try:
            validate_password(password, user=candidate)
        except ValidationError as error:
            raise CommandError("Password refused: " + " ".join(error.messages))
        try:
            user = creator_create(email=email, password=password, workspace_name=workspace)
        except ApplicationError as error:
            raise CommandError(error.message)
        verb = "Updated" if existing else "Created"
        self.stdout.write(
            f"{verb} creator {user.email} (staff), owner of workspace '{workspace}'. "
            "Log in at /admin/ or get an API token with POST /console/api/login."
        )
