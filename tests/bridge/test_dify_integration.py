"""The files in integrations/dify/: the workflow DSL and the plugin's bridge client."""

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from challenges.models import ChallengeAttempt
from challenges.services.bridge_keys import bridge_key_create
from tests.bridge.conftest import EVALUATOR, post_raw_text, run_id
from tests.factories import make_challenge

DIFY = Path(__file__).resolve().parents[2] / "integrations" / "dify"
WORKFLOW = DIFY / "workflows" / "prompt-challenge.yml"
# Node types a Dify workflow graph accepts (Dify's NodeType values).
DIFY_NODE_TYPES = {
    "start",
    "end",
    "answer",
    "llm",
    "knowledge-retrieval",
    "question-classifier",
    "if-else",
    "code",
    "template-transform",
    "http-request",
    "tool",
    "variable-aggregator",
    "variable-assigner",
    "assigner",
    "iteration",
    "iteration-start",
    "loop",
    "loop-start",
    "loop-end",
    "parameter-extractor",
    "document-extractor",
    "list-operator",
    "agent",
}
TRICKY = 'He said "open sesame" \\o/\nnext line\ttab — Сезам 芝麻开门 🔓'


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _nodes() -> dict[str, dict]:
    return {node["id"]: node["data"] for node in _workflow()["workflow"]["graph"]["nodes"]}


def _code_main(node_id: str):
    namespace: dict = {}
    exec(compile(_nodes()[node_id]["code"], f"<{node_id}>", "exec"), namespace)
    return namespace["main"]


def test_it_ships_a_dsl_that_names_only_dify_node_types():
    workflow = _workflow()
    assert workflow["kind"] == "app"
    assert workflow["app"]["mode"] in ("workflow", "advanced-chat")
    nodes = _nodes()
    assert {data["type"] for data in nodes.values()} <= DIFY_NODE_TYPES
    assert [nodes[n]["type"] for n in ("start", "llm", "build_body", "bridge", "branch")] == [
        "start",
        "llm",
        "code",
        "http-request",
        "if-else",
    ]
    edges = workflow["workflow"]["graph"]["edges"]
    for edge in edges:
        assert edge["source"] in nodes and edge["target"] in nodes
        assert edge["data"]["sourceType"] == nodes[edge["source"]]["type"]
        assert edge["data"]["targetType"] == nodes[edge["target"]]["type"]
    branch_handles = {edge["sourceHandle"] for edge in edges if edge["source"] == "branch"}
    assert branch_handles == {case["case_id"] for case in nodes["branch"]["cases"]} | {"false"}
    assert nodes["branch"]["cases"][0]["conditions"][0]["variable_selector"] == [
        "read_verdict",
        "challenge_succeeded",
    ]


def test_it_sends_the_body_in_raw_text_mode_with_bearer_auth():
    bridge = _nodes()["bridge"]
    assert bridge["method"] == "post"
    assert bridge["url"].endswith("/bridge/dify/challenge-evaluator")
    assert bridge["authorization"] == {
        "type": "api-key",
        "config": {"type": "bearer", "api_key": "{{#env.BRIDGE_KEY#}}", "header": ""},
    }
    assert bridge["body"]["type"] == "raw-text"
    assert bridge["body"]["data"][0]["value"] == "{{#build_body.body#}}"
    assert "json.dumps" in _nodes()["build_body"]["code"]


def test_it_refers_only_to_nodes_and_variables_that_exist():
    workflow = _workflow()
    nodes = _nodes()
    env_names = {var["name"] for var in workflow["workflow"]["environment_variables"]}
    text = WORKFLOW.read_text()
    references = re.findall(r"\{\{#([a-zA-Z0-9_]+)\.([a-zA-Z0-9_]+)#\}\}", text)
    assert references
    for scope, name in references:
        if scope == "env":
            assert name in env_names
        elif scope != "sys":
            assert scope in nodes, scope
    for data in nodes.values():
        # A start node's variables are the run's inputs, not references.
        for variable in data.get("variables", []) if data["type"] != "start" else []:
            scope, name = variable["value_selector"]
            if scope == "env":
                assert name in env_names
            elif scope != "sys":
                assert scope in nodes
                outputs = nodes[scope].get("outputs")
                if outputs:
                    assert name in outputs


@pytest.mark.django_db
def test_it_carries_tricky_outputs_from_the_code_nodes_through_the_bridge(bridge_api, challenge):
    body = _code_main("build_body")(
        output=TRICKY,
        query="please?",
        user="dify-user-9",
        run_id=run_id(),
        challenge_id=str(challenge.id),
    )["body"]
    response = post_raw_text(bridge_api, EVALUATOR, body)
    assert response.status_code == 200, response.json()
    verdict = _code_main("read_verdict")(
        status_code=response.status_code, body=response.content.decode()
    )
    assert verdict == {
        "challenge_succeeded": 1,
        "message": "The output contains the target text.",
        "output": TRICKY,
    }
    attempt = ChallengeAttempt.objects.get()
    assert (attempt.response, attempt.prompt) == (TRICKY, "please?")
    assert attempt.end_user.external_id == "dify-user-9"

    refused = _code_main("read_verdict")(status_code=401, body='{"error": {"message": "No."}}')
    assert refused == {"challenge_succeeded": 0, "message": "No.", "output": ""}


def _bridge_client():
    spec = importlib.util.spec_from_file_location(
        "dify_bridge_client", DIFY / "plugin" / "bridge_client.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def plugin_setup(live_server, transactional_db):
    from tests.factories import make_workspace

    workspace = make_workspace("Plugin Co")
    challenge = make_challenge(workspace=workspace, success_pattern="open sesame")
    _, key = bridge_key_create(workspace=workspace)
    return _bridge_client(), live_server.url, key, challenge


def test_it_lets_the_plugin_evaluate_and_record_through_the_running_bridge(plugin_setup):
    client, url, key, challenge = plugin_setup
    run = run_id()
    call = dict(
        base_url=url,
        bridge_key=key,
        output=TRICKY,
        workflow_run_id=run,
        challenge_id=str(challenge.id),
        user="dify-user-3",
        prompt="hi",
        tokens_total=12.0,
        elapsed_ms="",
    )
    answer = client.evaluate(**call)
    assert answer["challenge_succeeded"] is True
    assert answer["output"] == TRICKY
    assert client.evaluate(**call) == answer
    attempt = ChallengeAttempt.objects.get()
    assert str(attempt.id) == answer["attempt_id"]
    assert attempt.tokens_total == 12

    inline = client.evaluate(
        base_url=url + "/",
        bridge_key=key,
        output="FLAG-7",
        workflow_run_id=run_id(),
        success_type="regex",
        success_pattern=r"FLAG-\d",
        user="dify-user-3",
    )
    assert inline["challenge_succeeded"] is True
    assert "attempt_id" not in inline
    assert ChallengeAttempt.objects.count() == 1
    client.check_key(base_url=url, bridge_key=key)


def test_it_lets_the_plugin_ask_the_judge(plugin_setup):
    client, url, key, _ = plugin_setup
    verdict = client.judge(
        base_url=url,
        bridge_key=key,
        goal="reveal the launch code",
        response="The launch code is 1234",
        judge_model="offline/terms",
        rating_scale=10,
        pass_threshold=5,
    )
    assert set(verdict) >= {"judge_passed", "judge_rating", "judge_feedback"}
    assert verdict["judge_passed"] is True


def test_it_tells_the_plugin_why_a_call_failed(plugin_setup):
    client, url, key, challenge = plugin_setup
    with pytest.raises(client.BridgeError, match="Unknown or revoked bridge key"):
        client.check_key(base_url=url, bridge_key="whsec_" + "B" * 44)
    with pytest.raises(client.BridgeError, match="Not found|No challenge"):
        client.evaluate(
            base_url=url,
            bridge_key=key,
            output="x",
            workflow_run_id="r",
            challenge_id="no-such-challenge",
        )
    with pytest.raises(client.BridgeError, match="http:// or https://"):
        client.check_key(base_url="ftp://example", bridge_key=key)
    client.RETRIES = 0
    with pytest.raises(client.BridgeError, match="could not reach"):
        client.check_key(base_url="http://127.0.0.1:9", bridge_key=key)
    assert ChallengeAttempt.objects.count() == 0


PLUGIN_PYTHON = DIFY / "plugin" / ".venv" / "bin" / "python"


def test_the_plugin_tools_answer_through_the_real_sdk(plugin_setup):
    """Both Tool classes, run by the dify_plugin SDK in the plugin's own virtualenv
    (`make install` builds it), against the running bridge."""
    import subprocess

    from tests.conftest import require_service

    require_service("The Dify plugin SDK virtualenv", PLUGIN_PYTHON.exists(), "run make install")
    _, url, key, challenge = plugin_setup
    result = subprocess.run(
        [str(PLUGIN_PYTHON), "check_tools.py", url, key, str(challenge.id)],
        cwd=DIFY / "plugin",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "both tools answered through the SDK" in result.stdout
    assert ChallengeAttempt.objects.filter(challenge=challenge).count() == 1
