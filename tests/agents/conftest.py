import copy

import pytest

from challenges.agents.tower import INBOX
from tests.factories import make_challenge


def make_agent(*, workspace, scenario: dict | None = None, **fields):
    """An agent challenge, by default the demo's inbox assistant (win: an email to
    attacker@evil.example)."""
    return make_challenge(
        workspace=workspace,
        **{
            "name": "Inbox",
            "mode": "agent",
            "agent": copy.deepcopy(scenario or INBOX),
            **fields,
        },
    )


@pytest.fixture
def inbox(workspace):
    return make_agent(workspace=workspace)
