"""A scenario is checked on write (SPEC §9): the console API, the admin and the event file
refuse a bad one with a message naming the field; a good one is stored with its defaults."""

import copy
import json

import pytest

from challenges.agents.tower import INBOX
from challenges.models import Challenge
from tests.agents.conftest import make_agent
from tests.challenges.test_admin_challenges import ADD, admin_client, change_url, form_data

pytestmark = pytest.mark.django_db


def create(creator_api, workspace, agent, **fields):
    return creator_api.post(
        "/console/api/challenges",
        {
            "workspace": str(workspace.id),
            "name": "Agent",
            "mode": "agent",
            "agent": agent,
            **fields,
        },
        format="json",
    )


def broken(change) -> dict:
    scenario = copy.deepcopy(INBOX)
    change(scenario)
    return scenario


def _tool(index, key, value):
    def change(scenario):
        scenario["tools"][index][key] = value

    return change


CASES = [
    (_tool(0, "name", "read inbox"), "agent.tools[0].name"),
    (_tool(1, "name", "read_inbox"), "agent.tools[1].name: 'read_inbox' is used twice"),
    (
        _tool(1, "parameters", {"type": "objekt"}),
        "agent.tools[1].parameters: not a valid JSON Schema",
    ),
    (_tool(1, "parameters", {"type": "string"}), "the top level must be"),
    (_tool(1, "returns", "Sent to {{arg:cc}}"), "{{arg:cc}} names no parameter"),
    (_tool(1, "returns", "{{file:/etc/passwd}}"), "unknown placeholder"),
    (lambda s: s["slots"][0].update(kind="sms"), "agent.slots[0].kind"),
    (lambda s: s["slots"][0].update(template="no text here"), "must hold {{text}} once"),
    (
        lambda s: s["tools"][0].update(returns="nothing"),
        "'email' reaches the agent through no tool",
    ),
    (lambda s: s["win"].update(tool="wire_money"), "agent.win.tool"),
    (
        lambda s: s["win"].update(args={"cc": {"equals": "x"}}),
        "agent.win.args.cc: send_email has no parameter",
    ),
    (lambda s: s["win"].update(args={"to": {"like": "x"}}), "agent.win.args.to: one matcher of"),
    (lambda s: s["win"].update(args={"to": {"regex": "(unclosed"}}), "agent.win.args.to.regex"),
    (lambda s: s["win"].update(args={"to": {"gt": "many"}}), "agent.win.args.to.gt: a number"),
    (lambda s: s["win"].update(conceal="yes"), "agent.win.conceal"),
    (lambda s: s.update(max_steps=0), "agent.max_steps"),
    (lambda s: s.update(token_budget=-5), "agent.token_budget"),
    (lambda s: s.update(task=""), "agent.task"),
    (
        lambda s: s["benign_tasks"][0]["expect"].update(tool="nope"),
        "agent.benign_tasks[0].expect.tool",
    ),
    (lambda s: s.update(surprise=1), "agent: unknown keys surprise"),
]


@pytest.mark.parametrize(("change", "message"), CASES)
def test_the_console_api_refuses_a_bad_scenario_naming_the_field(
    creator_api, workspace, change, message
):
    response = create(creator_api, workspace, broken(change))
    assert response.status_code == 400, response.content
    assert message in " ".join(response.json()["error"]["fields"]["agent"])
    assert not Challenge.objects.exists()


def test_agent_defences_are_checked_against_the_scenario(creator_api, workspace):
    guard = {"type": "tool_guard", "tool": "wire_money", "arg": "to", "allow": []}
    response = create(creator_api, workspace, INBOX, defences=[guard])
    assert "the tool guard's tool 'wire_money'" in str(response.json()["error"]["fields"])
    cap = create(creator_api, workspace, INBOX, defences=[{"type": "max_tool_calls", "limit": 0}])
    assert cap.status_code == 400 and "'limit'" in str(cap.json()["error"]["fields"]["defences"])
    text_layer = create(creator_api, workspace, INBOX, defences=[{"type": "output_guard"}])
    assert "guards a text reply" in str(text_layer.json()["error"]["fields"]["defences"])
    single = creator_api.post(
        "/console/api/challenges",
        {"workspace": str(workspace.id), "name": "S", "success_pattern": "x",
         "defences": [{"type": "spotlight"}]},
        format="json",
    )  # fmt: skip
    assert single.status_code == 400 and "agent challenges" in str(single.json())
    dify = create(
        creator_api,
        workspace,
        INBOX,
        target="dify",
        target_config={"base_url": "https://api.dify.ai"},
    )
    assert dify.status_code == 400 and "target" in dify.json()["error"]["fields"]


def test_a_good_scenario_is_stored_with_its_defaults(creator_api, workspace):
    scenario = copy.deepcopy(INBOX)
    del scenario["max_steps"]
    response = create(creator_api, workspace, scenario, defences=[{"type": "spotlight"}])
    assert response.status_code == 201, response.content
    stored = response.json()["agent"]
    assert stored["max_steps"] == 8 and stored["token_budget"] is None
    assert stored["win"]["conceal"] is False and stored["system_prompt"] == INBOX["system_prompt"]
    # Rules need no success pattern: the win is a tool call.
    assert Challenge.objects.get().success_pattern == ""


def test_the_admin_shows_and_checks_a_scenario(creator, workspace):
    challenge = make_agent(workspace=workspace, defences=[{"type": "spotlight"}])
    client = admin_client(creator)
    page = client.get(change_url(challenge))
    assert page.status_code == 200 and "read_inbox" in page.content.decode()
    bad = broken(lambda s: s["win"].update(tool="wire_money"))
    refused = client.post(
        ADD,
        form_data(workspace, name="Agent", mode="agent", agent=json.dumps(bad), success_pattern=""),
    )
    assert refused.status_code == 200 and "agent.win.tool" in refused.content.decode()
    saved = client.post(
        change_url(challenge),
        form_data(
            workspace, name="Inbox", mode="agent", agent=json.dumps(INBOX), success_pattern=""
        ),
    )
    assert saved.status_code == 302, saved.content.decode()[:3000]
    challenge.refresh_from_db()
    assert challenge.defences == [{"type": "spotlight"}]  # the editor keeps the agent layer
    assert challenge.agent["tools"][0]["name"] == "read_inbox"
