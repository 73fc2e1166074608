"""The built-in types and strategies ship with the app: a plain `pip install -r
requirements.txt` has them, no entry-point package needed; entry points add others."""

from importlib.metadata import EntryPoint

import pytest
from django.test import Client

from redblue.arena import registry
from redblue.arena.operator import ArenaType

BUILTIN_TYPES = {"psi", "millionaire", "ultimatum", "dining-cryptographers", "secret-keeper"}
BUILTIN_STRATEGIES = {"average", "win-rate", "red-team", "consecutive", "global-average"}


class KnockKnockType(ArenaType):
    name = "knock-knock"
    title = "Knock Knock"
    description = "A third-party type, registered through an entry point."
    players = 2


def installed(points: list[EntryPoint]):
    """What importlib.metadata finds when exactly these entry points are installed."""

    def entry_points(*, group: str) -> list[EntryPoint]:
        return [point for point in points if point.group == group]

    return entry_points


@pytest.fixture
def fresh_registry():
    registry.registry_reload()
    yield
    registry.registry_reload()


@pytest.mark.django_db
def test_it_serves_the_builtins_with_no_entry_point_installed(monkeypatch, fresh_registry):
    monkeypatch.setattr(registry, "entry_points", installed([]))

    metadata = Client().get("/api/metadata").json()

    assert set(metadata) == BUILTIN_TYPES
    assert metadata["psi"]["name"] == "Private Set Intersection"
    assert set(registry.scoring_strategies()) == BUILTIN_STRATEGIES
    created = Client().post("/api/challenges/ultimatum")
    assert created.status_code == 200 and created.json()["challengeType"] == "ultimatum"


@pytest.mark.django_db
def test_an_entry_point_adds_a_type_but_cannot_replace_a_builtin(monkeypatch, fresh_registry):
    module = f"{__name__}:KnockKnockType"
    monkeypatch.setattr(
        registry,
        "entry_points",
        installed(
            [
                EntryPoint(name="knock-knock", value=module, group=registry.TYPES_GROUP),
                EntryPoint(name="psi", value=module, group=registry.TYPES_GROUP),
            ]
        ),
    )

    metadata = Client().get("/api/metadata").json()

    assert set(metadata) == BUILTIN_TYPES | {"knock-knock"}
    assert metadata["knock-knock"]["name"] == "Knock Knock"
    assert metadata["psi"]["name"] == "Private Set Intersection"
