"""Builds integrations/dify/workflows/prompt-challenge-judged.yml and team-challenge.yml
from the plain DSL, each with the `dependencies` list its own nodes need."""

import copy

import yaml

SRC = "integrations/dify/workflows/prompt-challenge.yml"
DST = "integrations/dify/workflows/prompt-challenge-judged.yml"
# The package a plugin id is installed from, as Dify's export writes it (marketplace ids).
MARKETPLACE_PACKAGES = {
    "langgenius/openai": (
        "langgenius/openai:0.3.5@dcc15b5847dbe38c64c2a9fdc1ea2d46466b7028eb4766b251bc363b0eec3af3"
    ),
}


def plugin_id(provider: str) -> str:
    # A model provider "author/plugin/provider" lives in plugin "author/plugin"; Dify reads a
    # bare "openai" as langgenius's.
    parts = provider.split("/")
    return "/".join(parts[:2]) if len(parts) == 3 else f"langgenius/{provider}"


def plugin_dependencies(graph: dict) -> list[dict]:
    """Dify's `dependencies` entries for the plugins the graph's nodes use: the model
    provider of LLM nodes, the provider of tool nodes."""
    ids = []
    for node in graph["nodes"]:
        data = node["data"]
        provider = None
        if data["type"] in ("llm", "question-classifier", "parameter-extractor"):
            provider = data["model"]["provider"]
        elif data["type"] == "tool":
            provider = data["provider_id"]
        if provider and plugin_id(provider) not in ids:
            ids.append(plugin_id(provider))
    return [
        {
            "current_identifier": None,
            "type": "marketplace",
            "value": {
                "marketplace_plugin_unique_identifier": MARKETPLACE_PACKAGES[name],
                "version": None,
            },
        }
        for name in ids
    ]


with open(SRC) as source:
    wf = yaml.safe_load(source)
wf["app"]["name"] = "Prompt Hacking Challenge (judged)"
wf["app"]["description"] = (
    "The player's message goes to a guarded model; the platform's judging-llm node rates "
    "the reply, and the challenge-evaluator records the attempt on that rating (no second "
    "judge call) for an llm-judge challenge. Bodies are built with json.dumps and sent in "
    "raw-text mode with the bridge key."
)
g = wf["workflow"]["graph"]
wf["workflow"]["environment_variables"].append(
    {
        "id": "6f1d2a0e-0004-4c55-9a57-1b7e5d3c0004",
        "name": "CHALLENGE_GOAL",
        "value": "",
        "value_type": "string",
        "description": "The llm-judge challenge's goal, for the judge (as on the platform).",
    }
)
nodes = {n["id"]: n for n in g["nodes"]}
for node in g["nodes"]:
    if node["id"] not in ("start", "llm"):
        node["position"]["x"] += 600
        node["positionAbsolute"]["x"] += 600

judge_body = copy.deepcopy(nodes["build_body"])
judge_body["id"] = "build_judge_body"
judge_body["position"] = {"x": 680, "y": 280}
judge_body["positionAbsolute"] = {"x": 680, "y": 280}
judge_body["data"].update(
    title="Build judge body",
    desc="The judging-llm call's body, built with json.dumps.",
    code="""import json


def main(output: str, goal: str, run_id: str) -> dict:
    body = {"goal": goal, "response": output, "workflow_run_id": run_id}
    return {"body": json.dumps(body, ensure_ascii=False)}
""",
    variables=[
        {"variable": "output", "value_selector": ["llm", "text"]},
        {"variable": "goal", "value_selector": ["env", "CHALLENGE_GOAL"]},
        {"variable": "run_id", "value_selector": ["sys", "workflow_run_id"]},
    ],
)
judge = copy.deepcopy(nodes["bridge"])
judge["id"] = "judge"
judge["position"] = {"x": 980, "y": 280}
judge["positionAbsolute"] = {"x": 980, "y": 280}
judge["data"].update(
    title="Platform judge",
    desc="The judging-llm node: rates the reply against the goal; nothing is recorded.",
    url="{{#env.BRIDGE_URL#}}/bridge/dify/judging-llm",
)
judge["data"]["body"]["data"][0]["value"] = "{{#build_judge_body.body#}}"

build = nodes["build_body"]["data"]
build["title"] = "Build evaluator body"
build["desc"] = (
    "Chains the judge's outputs into the challenge-evaluator: the attempt is recorded on "
    "judge_passed and judge_rating without a second judge call. json.dumps keeps the text intact."
)
build["code"] = """import json


def main(
    output: str,
    query: str,
    user: str,
    run_id: str,
    challenge_id: str,
    judge_status: int,
    judge_body: str,
    link_code: str = "",
) -> dict:
    body = {
        "challenge_id": challenge_id,
        "output": output,
        "prompt": query,
        "user": user,
        "workflow_run_id": run_id,
    }
    if link_code and link_code.strip():
        body["link_code"] = link_code.strip()
    try:
        verdict = json.loads(judge_body) if judge_status == 200 else {}
    except ValueError:
        verdict = {}
    if isinstance(verdict, dict) and "judge_rating" in verdict:
        for name in ("judge_passed", "judge_rating", "judge_feedback", "judge_raw"):
            if name in verdict:
                body[name] = verdict[name]
    else:
        # No verdict from the judge: the attempt is recorded as not passed.
        body.update(judge_passed=False, judge_rating=None, judge_feedback="No verdict.")
    return {"body": json.dumps(body, ensure_ascii=False)}
"""
build["variables"] += [
    {"variable": "judge_status", "value_selector": ["judge", "status_code"]},
    {"variable": "judge_body", "value_selector": ["judge", "body"]},
]
for node in g["nodes"]:
    if node["id"] == "build_body":
        idx = g["nodes"].index(node)
g["nodes"][idx:idx] = [judge_body, judge]


def edge(source, target, stype, ttype):
    return {
        "id": f"{source}-source-{target}-target",
        "source": source,
        "sourceHandle": "source",
        "target": target,
        "targetHandle": "target",
        "type": "custom",
        "zIndex": 0,
        "data": {"sourceType": stype, "targetType": ttype, "isInIteration": False},
    }


g["edges"] = [e for e in g["edges"] if e["id"] != "llm-source-build_body-target"]
g["edges"][1:1] = [
    edge("llm", "build_judge_body", "llm", "code"),
    edge("build_judge_body", "judge", "code", "http-request"),
    edge("judge", "build_body", "http-request", "code"),
]
header = """# A Dify chatflow for an llm-judge challenge: the platform's judging-llm node rates the
# guarded model's reply and the challenge-evaluator records the attempt on that rating,
# without judging a second time. Import it in Dify (Studio → Import DSL file) and set
# BRIDGE_URL, BRIDGE_KEY, CHALLENGE_ID and CHALLENGE_GOAL. See ../README.md.
# Generated from prompt-challenge.yml by make_variants.py (run from the repository
# root after editing that file); the two share every other node.
"""


def _text(dumper, value):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


yaml.SafeDumper.add_representer(str, _text)
wf["dependencies"] = plugin_dependencies(wf["workflow"]["graph"])
with open(DST, "w") as f:
    f.write(header)
    yaml.safe_dump(wf, f, sort_keys=False, allow_unicode=True, width=100)


# The team-challenge chatflow: the player's message is their attack or defence.
TEAM_DST = "integrations/dify/workflows/team-challenge.yml"
with open(SRC) as source:
    team_wf = yaml.safe_load(source)
team_wf["app"]["name"] = "Red/Blue Team Challenge"
team_wf["app"]["description"] = (
    "The player's message is a red-team attack or a blue-team defence for a red/blue team "
    "challenge; a Code node builds the team-challenge call with json.dumps and an HTTP "
    "Request node sends it in raw-text mode with the bridge key."
)
team_wf["workflow"]["features"]["opening_statement"] = (
    "Pick your team, then send your attack (red) or your defence system prompt (blue)."
)
for variable in team_wf["workflow"]["environment_variables"]:
    if variable["name"] == "CHALLENGE_ID":
        variable["name"] = "RED_BLUE_CHALLENGE_ID"
        variable["description"] = "The red/blue team challenge's id (or slug) on the platform."
tg = team_wf["workflow"]["graph"]
team_nodes = {n["id"]: n for n in tg["nodes"]}
start = team_nodes["start"]
start["data"]["desc"] = "The player's message (sys.query) is the prompt; team_choice the side."
start["data"]["variables"] = [
    {
        "variable": "team_choice",
        "label": "Team",
        "type": "select",
        "required": True,
        "options": ["red", "blue"],
    }
]
body = team_nodes["build_body"]
body["position"] = body["positionAbsolute"] = {"x": 380, "y": 280}
body["data"]["title"] = "Build team body"
body["data"]["desc"] = "json.dumps keeps quotes, backslashes and newlines in the prompt intact."
body["data"]["code"] = """import json


def main(query: str, user: str, run_id: str, challenge_id: str, team_choice: str) -> dict:
    team = (team_choice or "").strip().lower()
    body = {
        "red_blue_challenge_id": challenge_id,
        "team_choice": team,
        "defense_prompt" if team == "blue" else "attack_prompt": query,
        "user": user,
        "workflow_run_id": run_id,
    }
    return {"body": json.dumps(body, ensure_ascii=False)}
"""
body["data"]["variables"] = [
    {"variable": "query", "value_selector": ["sys", "query"]},
    {"variable": "user", "value_selector": ["sys", "user_id"]},
    {"variable": "run_id", "value_selector": ["sys", "workflow_run_id"]},
    {"variable": "challenge_id", "value_selector": ["env", "RED_BLUE_CHALLENGE_ID"]},
    {"variable": "team_choice", "value_selector": ["start", "team_choice"]},
]
bridge = team_nodes["bridge"]
bridge["position"] = bridge["positionAbsolute"] = {"x": 680, "y": 280}
bridge["data"]["title"] = "Platform team bridge"
bridge["data"]["url"] = "{{#env.BRIDGE_URL#}}/bridge/dify/team-challenge"
read = team_nodes["read_verdict"]
read["id"] = "read_outcome"
read["position"] = read["positionAbsolute"] = {"x": 980, "y": 280}
read["data"]["title"] = "Read outcome"
read["data"]["desc"] = "Turns the bridge's JSON answer into one line for the player."
read["data"]["code"] = """import json


def main(status_code: int, body: str) -> dict:
    try:
        answer = json.loads(body)
    except ValueError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    if status_code != 200:
        error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        return {"status": "refused", "message": error.get("message") or "No outcome."}
    team = answer.get("team", "")
    if answer.get("status") == "waiting":
        message = f"Your {team} prompt is in; it waits for someone on the other side."
    else:
        message = (
            f"Team {team}: {answer.get('judge_feedback') or 'judged'} "
            f"(+{answer.get('team_points', 0)} points, {answer.get('total_points', 0)} in all)"
        )
    return {"status": answer.get("status", ""), "message": message}
"""
read["data"]["variables"] = [
    {"variable": "status_code", "value_selector": ["bridge", "status_code"]},
    {"variable": "body", "value_selector": ["bridge", "body"]},
]
read["data"]["outputs"] = {
    "status": {"type": "string", "children": None},
    "message": {"type": "string", "children": None},
}
answer = team_nodes["answer_won"]
answer["id"] = "answer"
answer["position"] = answer["positionAbsolute"] = {"x": 1280, "y": 280}
answer["data"]["title"] = "Outcome"
answer["data"]["answer"] = "{{#read_outcome.message#}}"
tg["nodes"] = [start, body, bridge, read, answer]
tg["edges"] = [
    edge("start", "build_body", "start", "code"),
    edge("build_body", "bridge", "code", "http-request"),
    edge("bridge", "read_outcome", "http-request", "code"),
    edge("read_outcome", "answer", "code", "answer"),
]
team_header = """# A Dify chatflow for a red/blue team challenge: the player picks a team and sends
# an attack (red) or a defence system prompt (blue) to POST /bridge/dify/team-challenge.
# Import it in Dify (Studio → Import DSL file) and set BRIDGE_URL, BRIDGE_KEY and
# RED_BLUE_CHALLENGE_ID. See ../README.md. Generated by make_variants.py.
"""
team_wf["dependencies"] = plugin_dependencies(tg)
with open(TEAM_DST, "w") as f:
    f.write(team_header)
    yaml.safe_dump(team_wf, f, sort_keys=False, allow_unicode=True, width=100)
