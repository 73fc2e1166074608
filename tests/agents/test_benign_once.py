"""An agent scenario's benign tasks run once per configuration (docs/agents.md, "Benign
tasks"): they read no player's text, so the first run of a configuration on a target runs
them, later runs show its outcomes, and the creator's spend — not the player's — pays."""

import pytest

from challenges.agents.tower import INBOX
from challenges.models import AgentBenignCheck, AgentRun, Spend
from challenges.services.budgets import model_price_set
from challenges.services.secrets import secret_create, secret_update
from tests.agents.conftest import make_agent
from tests.agents.test_runs_api import ATTACK, run
from tests.conftest import client_for
from tests.factories import make_player

pytestmark = pytest.mark.django_db

BENIGN_TASK = INBOX["benign_tasks"][0]["task"]
MODEL_TOKENS = 30


def inbox_model(fake_openai):
    """A model on the fake OpenAI server: reads the inbox, follows what the email says, and
    carries out a task naming send_email to Bob."""
    from tests.judging.fake_openai import Reply, tool_call

    def answer(request):
        task = request["messages"][1]["content"]
        seen = [m for m in request["messages"] if m["role"] == "tool"]
        if task == BENIGN_TASK:
            if seen:
                return Reply(content="Sent.", total_tokens=MODEL_TOKENS)
            email = {"to": "bob@example.com", "subject": "Lunch", "body": "Yes."}
            return Reply(tool_calls=[tool_call("send_email", email)], total_tokens=MODEL_TOKENS)
        if not seen:
            return Reply(tool_calls=[tool_call("read_inbox")], total_tokens=MODEL_TOKENS)
        return Reply(content="Nothing to do.", total_tokens=MODEL_TOKENS)

    fake_openai.answer = answer


def benign_requests(fake_openai) -> int:
    return sum(
        1 for request in fake_openai.requests if request["messages"][1]["content"] == BENIGN_TASK
    )


def spent(challenge, end_user=None) -> Spend:
    return Spend.objects.get(challenge=challenge, end_user=end_user)


def test_two_players_runs_make_the_benign_tasks_model_calls_once(workspace, fake_openai):
    inbox_model(fake_openai)
    challenge = make_agent(workspace=workspace, target="openai", target_model="gpt-test")
    model_price_set(
        workspace=workspace, model="gpt-test", input_per_1k=1, output_per_1k=1, currency="USD"
    )
    first, second = make_player("first@example.com"), make_player("second@example.com")

    one = run(client_for(first), challenge, {"email": ATTACK}).json()
    assert benign_requests(fake_openai) == 2  # the call to Bob, then the answer
    two = run(client_for(second), challenge, {"email": "Socks on sale."}).json()
    again = run(client_for(first), challenge, {"email": "Hello."}).json()

    assert benign_requests(fake_openai) == 2
    # Each run's own loop: read_inbox, then the answer.
    assert len(fake_openai.requests) == 2 + 3 * 2
    expected = [{"task": BENIGN_TASK, "passed": True}]
    assert one["benign"] == two["benign"] == again["benign"] == expected
    runs = AgentRun.objects.order_by("created_at")
    assert [row.benign_tokens for row in runs] == [2 * MODEL_TOKENS, 0, 0]

    # The creator's spend pays for the check once; no player's own scope pays for it.
    players_tokens = 3 * 2 * MODEL_TOKENS
    assert spent(challenge).tokens == players_tokens + 2 * MODEL_TOKENS
    assert Spend.objects.get(challenge=None, end_user=None).tokens == spent(challenge).tokens
    first_user, second_user = (AgentRun.objects.get(pk=body["id"]).end_user for body in (one, two))
    assert spent(challenge, first_user).tokens == 2 * 2 * MODEL_TOKENS
    assert spent(challenge, second_user).tokens == 2 * MODEL_TOKENS
    assert (
        spent(challenge).cost
        > spent(challenge, first_user).cost + spent(challenge, second_user).cost
    )


def test_a_changed_configuration_runs_them_again(creator_api, workspace, fake_openai):
    inbox_model(fake_openai)
    challenge = make_agent(workspace=workspace, target="openai", target_model="gpt-test")
    player = make_player()
    run(client_for(player), challenge, {"email": ATTACK})
    guard = {"type": "tool_guard", "tool": "send_email", "arg": "to", "allow": ["nobody@x.example"]}
    changed = creator_api.patch(
        f"/console/api/challenges/{challenge.id}", {"defences": [guard]}, format="json"
    )
    assert changed.status_code == 200, changed.content

    body = run(client_for(player), challenge, {"email": ATTACK}).json()

    # The guard now refuses the call to Bob, and the run says so.
    assert benign_requests(fake_openai) == 4
    assert body["benign"] == [{"task": BENIGN_TASK, "passed": False}]
    run(client_for(make_player()), challenge, {"email": ATTACK})
    assert benign_requests(fake_openai) == 4


def test_a_secret_in_the_agents_system_prompt_is_part_of_what_they_depend_on(workspace):
    """A new value of the secret keeps the configuration's digest (it names the secret, not
    its value) but may change what the agent does: the tasks run again."""
    secret = secret_create(workspace=workspace, name="inbox-code", value="ALPHA")
    scenario = {**INBOX, "system_prompt": INBOX["system_prompt"] + " The code is {{secret}}."}
    challenge = make_agent(workspace=workspace, scenario=scenario, secret_ref="inbox-code")
    player = make_player()
    run(client_for(player), challenge, {"email": "Hi."})
    run(client_for(player), challenge, {"email": "Hi."})
    secret_update(secret=secret, value="BRAVO")
    run(client_for(player), challenge, {"email": "Hi."})

    paid = [row.benign_tokens > 0 for row in AgentRun.objects.order_by("created_at")]
    assert paid == [True, False, True]
    digests = AgentBenignCheck.objects.values_list("config_sha256", "setting")
    assert len({sha for sha, _ in digests}) == 1 and len(digests) == 2
    assert not any("ALPHA" in setting or "BRAVO" in setting for _, setting in digests)
