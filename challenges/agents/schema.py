"""An agent scenario's shape (SPEC §9), checked in one place.

`agent_errors` says everything wrong with a `Challenge.agent` value, each message naming
the field (`agent.tools[1].parameters: …`); `agent_clean` gives the value as stored, with
defaults filled in. The console API, the admin, the event-file import and any builder of
scenarios call these two and nothing else.
"""

import re
from typing import Any

from jsonschema import SchemaError
from jsonschema.validators import Draft202012Validator

from challenges.agents.matching import MATCHERS
from core.numbers import is_number
from judging.rules import PatternError, compile_pattern

SLOT_KINDS = ("email", "web_page", "document", "tool_result")
AGENT_KEYS = (
    "system_prompt",
    "task",
    "tools",
    "slots",
    "win",
    "benign_tasks",
    "max_steps",
    "token_budget",
)
TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
SLOT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")
# The only placeholders a `returns` template knows: a call's argument and a slot's text.
PLACEHOLDER = re.compile(r"\{\{\s*(arg|slot)\s*:\s*([A-Za-z][A-Za-z0-9_]*)\s*\}\}")
TEXT_PLACEHOLDER = re.compile(r"\{\{\s*text\s*\}\}")
ANY_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
MAX_TOOLS = 12
MAX_SLOTS = 6
MAX_BENIGN_TASKS = 5
MAX_STEPS_CEILING = 50
DEFAULT_MAX_STEPS = 8
TEXT_LIMITS = {"system_prompt": 50_000, "task": 5_000, "description": 2_000, "template": 20_000}


def _text_error(path: str, value: Any, *, limit: int, required: bool = True) -> str | None:
    if not isinstance(value, str):
        return f"{path}: text is required." if required or value is not None else None
    if required and not value.strip():
        return f"{path}: text is required."
    if len(value) > limit:
        return f"{path}: at most {limit} characters."
    return None


def _whole(value: Any) -> bool:
    return type(value) is int  # noqa: E721 - bool is not a count


def _schema_errors(path: str, parameters: Any) -> list[str]:
    if not isinstance(parameters, dict):
        return [f'{path}: a JSON Schema object such as {{"type": "object", "properties": {{}}}}.']
    try:
        Draft202012Validator.check_schema(parameters)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.path)
        return [f"{path}: not a valid JSON Schema ({where or 'top'}: {exc.message})."]
    errors = []
    if parameters.get("type") != "object":
        errors.append(f'{path}: the top level must be {{"type": "object"}} (tool arguments).')
    properties = parameters.get("properties", {})
    if not isinstance(properties, dict):
        errors.append(f"{path}.properties: an object of argument names.")
    return errors


def _properties(tool: dict) -> set[str]:
    parameters = tool.get("parameters") if isinstance(tool, dict) else None
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    return set(properties) if isinstance(properties, dict) else set()


def _template_errors(path: str, template: str, *, arg_names: set[str], slot_names: set[str]):
    errors = []
    for found in ANY_PLACEHOLDER.finditer(template):
        placeholder = PLACEHOLDER.fullmatch(found.group(0))
        if placeholder is None:
            errors.append(
                f"{path}: unknown placeholder {found.group(0)!r}; use {{{{arg:<name>}}}} or "
                "{{slot:<name>}}."
            )
            continue
        kind, name = placeholder.groups()
        if kind == "arg" and name not in arg_names:
            errors.append(f"{path}: {{{{arg:{name}}}}} names no parameter of this tool.")
        if kind == "slot" and name not in slot_names:
            errors.append(f"{path}: {{{{slot:{name}}}}} names no slot.")
    return errors


def rule_errors(path: str, rule: Any, *, tools: dict[str, dict]) -> list[str]:
    """A win rule or a benign task's `expect`: `{tool, args: {<field>: {<matcher>: value}}}`."""
    if not isinstance(rule, dict):
        return [f"{path}: an object {{tool, args}}."]
    errors = []
    unknown = set(rule) - {"tool", "args", "conceal"}
    if unknown:
        errors.append(f"{path}: unknown keys {', '.join(sorted(unknown))}.")
    tool = rule.get("tool")
    if tool not in tools:
        errors.append(f"{path}.tool: must name one of the scenario's tools.")
    args = rule.get("args", {})
    if not isinstance(args, dict):
        return [*errors, f"{path}.args: an object of argument matchers."]
    known = _properties(tools.get(tool, {}))
    for field, matcher in args.items():
        where = f"{path}.args.{field}"
        if tool in tools and field not in known:
            errors.append(f"{where}: {tool} has no parameter '{field}'.")
        if (
            not isinstance(matcher, dict)
            or len(matcher) != 1
            or next(iter(matcher)) not in MATCHERS
        ):
            errors.append(f'{where}: one matcher of {", ".join(MATCHERS)}, e.g. {{"equals": "x"}}.')
            continue
        ((kind, value),) = matcher.items()
        if kind in ("gt", "lt") and not is_number(value):
            errors.append(f"{where}.{kind}: a number.")
        elif kind in ("contains", "regex") and not (isinstance(value, str) and value):
            errors.append(f"{where}.{kind}: non-empty text.")
        elif kind == "equals" and not (isinstance(value, str | bool) or is_number(value)):
            errors.append(f"{where}.equals: text, a number or true/false.")
        elif kind == "regex":
            try:
                compile_pattern(value)
            except PatternError as exc:
                errors.append(f"{where}.regex: not a valid RE2 pattern: {exc}")
    return errors


def _tools_errors(tools: Any, slot_names: set[str]) -> tuple[list[str], dict[str, dict]]:
    if not isinstance(tools, list) or not tools:
        return [
            "agent.tools: a list of at least one tool {name, description, parameters, returns}."
        ], {}
    if len(tools) > MAX_TOOLS:
        return [f"agent.tools: at most {MAX_TOOLS} tools."], {}
    errors, named = [], {}
    for number, tool in enumerate(tools):
        path = f"agent.tools[{number}]"
        if not isinstance(tool, dict):
            errors.append(f"{path}: an object {{name, description, parameters, returns}}.")
            continue
        unknown = set(tool) - {"name", "description", "parameters", "returns"}
        if unknown:
            errors.append(f"{path}: unknown keys {', '.join(sorted(unknown))}.")
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            errors.append(f"{path}.name: letters, digits and _ (a letter first, at most 64).")
        elif name in named:
            errors.append(f"{path}.name: '{name}' is used twice.")
        else:
            named[name] = tool
        message = _text_error(
            f"{path}.description",
            tool.get("description", ""),
            limit=TEXT_LIMITS["description"],
            required=False,
        )
        if message:
            errors.append(message)
        errors += _schema_errors(f"{path}.parameters", tool.get("parameters"))
        returns = tool.get("returns", "")
        if not isinstance(returns, str) or len(returns) > TEXT_LIMITS["template"]:
            errors.append(
                f"{path}.returns: a text template of at most {TEXT_LIMITS['template']} characters."
            )
        else:
            errors += _template_errors(
                f"{path}.returns", returns, arg_names=_properties(tool), slot_names=slot_names
            )
    return errors, named


def _slots_errors(slots: Any) -> tuple[list[str], set[str]]:
    if not isinstance(slots, list) or not slots:
        return ["agent.slots: a list of at least one slot {name, kind, template}."], set()
    if len(slots) > MAX_SLOTS:
        return [f"agent.slots: at most {MAX_SLOTS} slots."], set()
    errors, names = [], set()
    for number, slot in enumerate(slots):
        path = f"agent.slots[{number}]"
        if not isinstance(slot, dict):
            errors.append(f"{path}: an object {{name, kind, template}}.")
            continue
        unknown = set(slot) - {"name", "kind", "template"}
        if unknown:
            errors.append(f"{path}: unknown keys {', '.join(sorted(unknown))}.")
        name = slot.get("name")
        if not isinstance(name, str) or not SLOT_NAME.match(name):
            errors.append(f"{path}.name: letters, digits and _ (a letter first, at most 40).")
        elif name in names:
            errors.append(f"{path}.name: '{name}' is used twice.")
        else:
            names.add(name)
        if slot.get("kind") not in SLOT_KINDS:
            errors.append(f"{path}.kind: one of {', '.join(SLOT_KINDS)}.")
        template = slot.get("template", "{{text}}")
        if not isinstance(template, str) or len(template) > TEXT_LIMITS["template"]:
            errors.append(f"{path}.template: text of at most {TEXT_LIMITS['template']} characters.")
        elif len(TEXT_PLACEHOLDER.findall(template)) != 1:
            errors.append(
                f"{path}.template: must hold {{{{text}}}} once, where the player's text goes."
            )
        elif any(
            not TEXT_PLACEHOLDER.fullmatch(found.group(0))
            for found in ANY_PLACEHOLDER.finditer(template)
        ):
            errors.append(f"{path}.template: the only placeholder here is {{{{text}}}}.")
    return errors, names


def agent_errors(agent: Any) -> list[str]:
    """Every problem with an agent scenario, each message naming its field."""
    if not isinstance(agent, dict):
        return ["agent: an object {system_prompt, task, tools, slots, win, benign_tasks, …}."]
    errors = []
    unknown = set(agent) - set(AGENT_KEYS)
    if unknown:
        errors.append(f"agent: unknown keys {', '.join(sorted(unknown))}.")
    for key in ("system_prompt", "task"):
        message = _text_error(
            f"agent.{key}", agent.get(key), limit=TEXT_LIMITS[key], required=key == "task"
        )
        if message:
            errors.append(message)
    slot_messages, slot_names = _slots_errors(agent.get("slots"))
    errors += slot_messages
    tool_messages, tools = _tools_errors(agent.get("tools"), slot_names)
    errors += tool_messages
    used = {
        found.group(2)
        for tool in tools.values()
        for found in PLACEHOLDER.finditer(tool.get("returns") or "")
        if found.group(1) == "slot"
    }
    for name in sorted(slot_names - used):
        errors.append(
            f"agent.slots: '{name}' reaches the agent through no tool: put {{{{slot:{name}}}}} "
            "in a tool's returns."
        )
    win = agent.get("win")
    errors += rule_errors("agent.win", win, tools=tools)
    if isinstance(win, dict) and not isinstance(win.get("conceal", False), bool):
        errors.append("agent.win.conceal: true or false.")
    benign = agent.get("benign_tasks", [])
    if not isinstance(benign, list) or len(benign) > MAX_BENIGN_TASKS:
        errors.append(f"agent.benign_tasks: a list of at most {MAX_BENIGN_TASKS} {{task, expect}}.")
    else:
        for number, item in enumerate(benign):
            path = f"agent.benign_tasks[{number}]"
            if not isinstance(item, dict) or set(item) - {"task", "expect"}:
                errors.append(f"{path}: an object {{task, expect}}.")
                continue
            message = _text_error(f"{path}.task", item.get("task"), limit=TEXT_LIMITS["task"])
            if message:
                errors.append(message)
            expect = item.get("expect")
            if isinstance(expect, dict) and "conceal" in expect:
                errors.append(f"{path}.expect: conceal belongs to the win rule only.")
            errors += rule_errors(f"{path}.expect", expect, tools=tools)
    max_steps = agent.get("max_steps", DEFAULT_MAX_STEPS)
    if not _whole(max_steps) or not 1 <= max_steps <= MAX_STEPS_CEILING:
        errors.append(f"agent.max_steps: a whole number from 1 to {MAX_STEPS_CEILING}.")
    budget = agent.get("token_budget")
    if budget is not None and (not _whole(budget) or budget < 1):
        errors.append("agent.token_budget: a positive whole number, or null for none.")
    return errors


def agent_clean(agent: dict) -> dict:
    """A valid scenario as stored: every key present, defaults filled in."""
    return {
        "system_prompt": agent.get("system_prompt") or "",
        "task": agent["task"],
        "tools": [
            {
                "name": tool["name"],
                "description": tool.get("description") or "",
                "parameters": tool["parameters"],
                "returns": tool.get("returns") or "",
            }
            for tool in agent["tools"]
        ],
        "slots": [
            {
                "name": slot["name"],
                "kind": slot["kind"],
                "template": slot.get("template", "{{text}}"),
            }
            for slot in agent["slots"]
        ],
        "win": {
            "tool": agent["win"]["tool"],
            "args": dict(agent["win"].get("args") or {}),
            "conceal": bool(agent["win"].get("conceal", False)),
        },
        "benign_tasks": [
            {
                "task": item["task"],
                "expect": {
                    "tool": item["expect"]["tool"],
                    "args": dict(item["expect"].get("args") or {}),
                },
            }
            for item in agent.get("benign_tasks") or []
        ],
        "max_steps": agent.get("max_steps", DEFAULT_MAX_STEPS),
        "token_budget": agent.get("token_budget"),
    }
