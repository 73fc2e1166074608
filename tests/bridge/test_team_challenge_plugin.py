"""The Dify plugin's Red/Blue Team Challenge tool against the running bridge."""

import importlib.util
import subprocess
from pathlib import Path

import pytest
import yaml

from challenges.services.bridge_keys import bridge_key_create
from redblue.models import TeamSubmission
from tests.bridge.conftest import run_id
from tests.conftest import require_service
from tests.factories import make_workspace
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE, make_red_blue

PLUGIN = Path(__file__).resolve().parents[2] / "integrations" / "dify" / "plugin"


def _bridge_client():
    spec = importlib.util.spec_from_file_location("dify_bridge_client", PLUGIN / "bridge_client.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def team_setup(live_server, transactional_db):
    workspace = make_workspace("Team Plugin Co")
    challenge = make_red_blue(workspace=workspace)
    _, key = bridge_key_create(workspace=workspace)
    return live_server.url, key, challenge


def test_the_client_submits_both_sides_and_reads_the_outcome(team_setup):
    client = _bridge_client()
    url, key, challenge = team_setup
    common = dict(base_url=url, bridge_key=key, red_blue_challenge_id=str(challenge.id))

    defence = client.team_challenge(
        **common, team_choice="blue", prompt=WEAK_DEFENSE, user="def", workflow_run_id=run_id()
    )
    run = run_id()
    attack = client.team_challenge(
        **common, team_choice="RED", prompt=ROLEPLAY_ATTACK, user="att", workflow_run_id=run
    )

    assert defence["status"] == "waiting"
    assert (attack["team"], attack["status"]) == ("red", "completed")
    assert attack["pairing_id"]
    again = client.team_challenge(
        **common, team_choice="red", prompt=ROLEPLAY_ATTACK, user="att", workflow_run_id=run
    )
    assert again == attack
    assert TeamSubmission.objects.filter(red_blue_challenge=challenge).count() == 2
    with pytest.raises(client.BridgeError, match="team_choice|red|blue"):
        client.team_challenge(
            **common, team_choice="green", prompt="x", user="att", workflow_run_id=run_id()
        )


def test_the_team_tool_answers_through_the_real_sdk(team_setup):
    python = PLUGIN / ".venv" / "bin" / "python"
    require_service("The Dify plugin SDK virtualenv", python.exists(), "run make install")
    url, key, challenge = team_setup
    result = subprocess.run(
        [str(python), "check_team_tool.py", url, key, str(challenge.id)],
        cwd=PLUGIN,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the team tool answered through the SDK" in result.stdout
    assert TeamSubmission.objects.filter(red_blue_challenge=challenge).count() == 2


TEAM_DSL = PLUGIN.parent / "workflows" / "team-challenge.yml"


def _team_nodes() -> dict[str, dict]:
    workflow = yaml.safe_load(TEAM_DSL.read_text())
    return {node["id"]: node["data"] for node in workflow["workflow"]["graph"]["nodes"]}


def _team_code(node_id: str):
    namespace: dict = {}
    exec(compile(_team_nodes()[node_id]["code"], f"<{node_id}>", "exec"), namespace)
    return namespace["main"]


def test_the_team_dsl_is_a_wired_chatflow():
    workflow = yaml.safe_load(TEAM_DSL.read_text())
    nodes = _team_nodes()
    edges = {edge["source"]: edge["target"] for edge in workflow["workflow"]["graph"]["edges"]}
    path = ["start"]
    while path[-1] in edges:
        path.append(edges[path[-1]])
    assert path == ["start", "build_body", "bridge", "read_outcome", "answer"]
    assert nodes["bridge"]["url"].endswith("/bridge/dify/team-challenge")
    assert nodes["bridge"]["body"]["type"] == "raw-text"
    env_names = {var["name"] for var in workflow["workflow"]["environment_variables"]}
    for data in nodes.values():
        for variable in data.get("variables", []) if data["type"] != "start" else []:
            scope, name = variable["value_selector"]
            assert scope in ("sys", "env", *nodes), scope
            if scope == "env":
                assert name in env_names


@pytest.mark.django_db(transaction=True)
def test_the_team_dsl_code_nodes_play_both_sides_through_the_bridge(workspace):
    from tests.bridge.conftest import bearer_client, post_raw_text

    _, raw = bridge_key_create(workspace=workspace)
    bridge = bearer_client(raw)
    challenge = make_red_blue(workspace=workspace)
    answers = []
    for team, prompt, user in (("blue", WEAK_DEFENSE, "def"), ("Red", ROLEPLAY_ATTACK, "att")):
        body = _team_code("build_body")(
            query=prompt,
            user=user,
            run_id=run_id(),
            challenge_id=str(challenge.id),
            team_choice=team,
        )["body"]
        response = post_raw_text(bridge, "/bridge/dify/team-challenge", body)
        answers.append(
            _team_code("read_outcome")(
                status_code=response.status_code, body=response.content.decode()
            )
        )

    assert answers[0]["status"] == "waiting"
    assert "waits for someone" in answers[0]["message"]
    assert answers[1]["status"] == "completed"
    assert answers[1]["message"].startswith("Team red:")
    refused = _team_code("read_outcome")(status_code=400, body='{"error": {"message": "No."}}')
    assert refused == {"status": "refused", "message": "No."}
