"""`manage.py demo --target-model M` (what `make run-model` runs): the Gandalf levels are
played against M at OPENAI_BASE_URL, once however often it runs; without an endpoint it
refuses and changes nothing."""

import pytest
from django.core.management import CommandError, call_command

from challenges.management.commands.demo import GANDALF_SLUGS
from challenges.models import Challenge

pytestmark = pytest.mark.django_db


def _gandalf_targets() -> set[tuple[str, str]]:
    return set(
        Challenge.objects.filter(slug__in=GANDALF_SLUGS).values_list("target", "target_model")
    )


def test_it_moves_the_gandalf_levels_onto_the_model_once(settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:19000/v1"
    call_command("demo", target_model="qwen2.5-coder-0.5b-instruct")
    call_command("demo", target_model="qwen2.5-coder-0.5b-instruct")
    assert Challenge.objects.filter(slug__in=GANDALF_SLUGS).count() == len(GANDALF_SLUGS)
    assert _gandalf_targets() == {(Challenge.Target.OPENAI, "qwen2.5-coder-0.5b-instruct")}


def test_it_refuses_without_an_endpoint(settings):
    settings.OPENAI_BASE_URL = ""
    with pytest.raises(CommandError, match="OPENAI_BASE_URL"):
        call_command("demo", target_model="qwen2.5-coder-0.5b-instruct")
    assert not Challenge.objects.filter(slug__in=GANDALF_SLUGS).exists()
