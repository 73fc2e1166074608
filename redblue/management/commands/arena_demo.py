"""Install the arena's challenge types and keep one open session of each (idempotent).

Run after `demo` (or on its own): `python manage.py arena_demo`."""

from django.conf import settings
from django.core.management.base import BaseCommand

from redblue.arena.services import arena_session_create, arena_types_install_all
from redblue.models import ArenaSession


class Command(BaseCommand):
    help = "Install the built-in arena types and open one session of each."

    def handle(self, *args, **options):
        site = settings.SITE_URL.rstrip("/")
        for row in arena_types_install_all():
            waiting = ArenaSession.objects.filter(
                challenge_type=row, status=ArenaSession.Status.OPEN
            ).first()
            if waiting is None:
                waiting = arena_session_create(type_name=row.name)
                made = "opened"
            else:
                made = "kept"
            self.stdout.write(f"arena {row.name}: {made} {site}/arena/{waiting.pk}/")
