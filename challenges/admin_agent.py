"""The agent scenario editor of the challenge form (SPEC §9, docs/agents.md): rows of plain
fields — tools and their parameters, slots, the win rule, benign tasks, the agent defences —
from which the server builds `Challenge.agent` and the agent layers of `defences`. The
scenario is checked by `agent_errors` (challenges/agents/schema.py) like every other way in,
and each of its messages is put back on the row it names.

Rows are fixed in number (as the several-targets rows are), so the form works without
JavaScript; static/js/challenge_admin_form.js hides the empty rows behind "Add" buttons.
What a row cannot show of a stored scenario (a parameter's `enum`, a tool's extra schema
keys) is kept for the same tool and parameter names.
"""

import re
from typing import Any

from django import forms

from challenges.agents.matching import MATCHERS
from challenges.agents.schema import DEFAULT_MAX_STEPS, MAX_STEPS_CEILING, SLOT_KINDS
from challenges.services.defences import (
    AGENT_DEFENCE_KINDS,
    LLM_TOOL_CHECK,
    MAX_TOOL_CALLS,
    MAX_TOOL_CALLS_CEILING,
    SPOTLIGHT,
    TOOL_GUARD,
)
from core.numbers import is_number

TOOL_ROWS = 4
PARAM_ROWS = 4
SLOT_ROWS = 3
WIN_ARG_ROWS = 3
BENIGN_ROWS = 3
BENIGN_ARG_ROWS = 2
GUARD_ROWS = 3
PARAM_TYPES = ("string", "integer", "number", "boolean", "array", "object")
NUMBER_TYPES = ("integer", "number")
RETURNS_HELP = (
    "What the tool answers. Put in a call's argument with {{arg:<parameter>}} and a slot's "
    "text with {{slot:<slot name>}}."
)
TOOL_LIST = "agent-tool-names"
PARAM_LIST = "agent-param-names"


def _text(label: str, *, help_text: str = "", size: int = 20, **attrs: Any) -> forms.CharField:
    return forms.CharField(
        required=False,
        label=label,
        help_text=help_text,
        widget=forms.TextInput(attrs={"size": size, **attrs}),
    )


def _area(label: str, *, rows: int = 3, help_text: str = "") -> forms.CharField:
    return forms.CharField(
        required=False,
        strip=False,
        label=label,
        help_text=help_text,
        widget=forms.Textarea(attrs={"rows": rows, "class": "vLargeTextField"}),
    )


def _matcher_fields(prefix: str, rows: int) -> dict[str, forms.Field]:
    fields: dict[str, forms.Field] = {}
    for row in range(1, rows + 1):
        fields[f"{prefix}_arg{row}_field"] = _text("Argument", size=14, list=PARAM_LIST)
        fields[f"{prefix}_arg{row}_matcher"] = forms.ChoiceField(
            required=False, label="Matches if it", choices=[(name, name) for name in MATCHERS]
        )
        fields[f"{prefix}_arg{row}_value"] = _text("Value", size=24)
    return fields


def agent_form_fields() -> dict[str, forms.Field]:
    """Every field of the editor, by name (they join ChallengeAdminForm's declared fields)."""
    fields: dict[str, forms.Field] = {
        "agent_system_prompt": _area(
            "Agent's system prompt", rows=3, help_text="{{secret}} is filled in on the server."
        ),
        "agent_task": _area(
            "User's task",
            rows=2,
            help_text="What the user asks the agent, e.g. 'Summarise my inbox and reply to Bob.'",
        ),
        "agent_max_steps": forms.IntegerField(
            required=False,
            min_value=1,
            max_value=MAX_STEPS_CEILING,
            label="Max steps",
            help_text=f"Model calls per run (default {DEFAULT_MAX_STEPS}).",
        ),
        "agent_token_budget": forms.IntegerField(
            required=False,
            min_value=1,
            label="Token budget",
            help_text="Tokens per run; blank for none.",
        ),
    }
    for tool in range(1, TOOL_ROWS + 1):
        prefix = f"agent_tool{tool}"
        fields[f"{prefix}_name"] = _text(
            f"Tool {tool}: name",
            size=18,
            help_text="e.g. send_email. Leave blank for no tool here." if tool == 1 else "",
        )
        fields[f"{prefix}_description"] = _text("Description", size=40)
        fields[f"{prefix}_returns"] = _area("Returns", rows=2, help_text=RETURNS_HELP)
        for param in range(1, PARAM_ROWS + 1):
            inner = f"{prefix}_param{param}"
            fields[f"{inner}_name"] = _text(f"Parameter {param}", size=14)
            fields[f"{inner}_type"] = forms.ChoiceField(
                required=False, label="Type", choices=[(name, name) for name in PARAM_TYPES]
            )
            fields[f"{inner}_description"] = _text("Description", size=24)
            fields[f"{inner}_required"] = forms.BooleanField(required=False, label="Required")
    for slot in range(1, SLOT_ROWS + 1):
        prefix = f"agent_slot{slot}"
        fields[f"{prefix}_name"] = _text(
            f"Slot {slot}: name",
            size=16,
            help_text="Where the player writes, e.g. inbox_email." if slot == 1 else "",
        )
        fields[f"{prefix}_kind"] = forms.ChoiceField(
            required=False, label="Kind", choices=[(name, name) for name in SLOT_KINDS]
        )
        fields[f"{prefix}_template"] = _area(
            "Template",
            rows=2,
            help_text="The text around the player's: {{text}} marks where it goes."
            if slot == 1
            else "",
        )
    fields["agent_win_tool"] = _text(
        "Winning tool", size=18, list=TOOL_LIST, help_text="The tool whose call wins the run."
    )
    fields.update(_matcher_fields("agent_win", WIN_ARG_ROWS))
    fields["agent_win_conceal"] = forms.BooleanField(
        required=False,
        label="Conceal",
        help_text="Win only when the final answer to the user names neither the tool nor the "
        "matching values.",
    )
    for task in range(1, BENIGN_ROWS + 1):
        prefix = f"agent_benign{task}"
        fields[f"{prefix}_task"] = _area(
            f"Benign task {task}",
            rows=2,
            help_text="A task the agent must still do, e.g. 'Reply to Bob'. Its slots are empty."
            if task == 1
            else "",
        )
        fields[f"{prefix}_tool"] = _text("Expected tool", size=18, list=TOOL_LIST)
        fields.update(_matcher_fields(prefix, BENIGN_ARG_ROWS))
    for guard in range(1, GUARD_ROWS + 1):
        prefix = f"agent_guard{guard}"
        fields[f"{prefix}_tool"] = _text(f"Tool guard {guard}: tool", size=18, list=TOOL_LIST)
        fields[f"{prefix}_arg"] = _text("Argument", size=14, list=PARAM_LIST)
        fields[f"{prefix}_allow"] = _text(
            "Allowed values",
            size=30,
            help_text="Separated by commas; any other value of the argument is refused."
            if guard == 1
            else "",
        )
    fields["agent_spotlight_on"] = forms.BooleanField(
        required=False,
        label="Spotlighting",
        help_text="Wrap each slot's text in data marks and tell the agent never to follow "
        "instructions found inside them.",
    )
    fields["agent_tool_check_on"] = forms.BooleanField(
        required=False,
        label="LLM tool check",
        help_text="A judge model reviews each proposed tool call against the user's task.",
    )
    fields["agent_tool_check_judge_model"] = _text(
        "Checker model",
        size=24,
        help_text="provider/model; blank for the offline checker (a call passes when the "
        "task names its tool).",
    )
    fields["agent_max_tool_calls"] = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_TOOL_CALLS_CEILING,
        label="Max tool calls",
        help_text="Tool calls per run; blank for no cap.",
    )
    return fields


def _rows(prefix: str, count: int, keys: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(f"{prefix}{row}_{key}" for key in keys) for row in range(1, count + 1))


def _matcher_lines(prefix: str, rows: int) -> tuple[tuple[str, ...], ...]:
    return tuple(
        (f"{prefix}_arg{row}_field", f"{prefix}_arg{row}_matcher", f"{prefix}_arg{row}_value")
        for row in range(1, rows + 1)
    )


def agent_fieldsets(classes: tuple[str, ...]) -> list[tuple[str, dict]]:
    """The editor's sections for ChallengeAdmin.get_fieldsets (shown for mode agent)."""
    tool_lines: list[Any] = []
    for tool in range(1, TOOL_ROWS + 1):
        prefix = f"agent_tool{tool}"
        tool_lines += [
            (f"{prefix}_name", f"{prefix}_description"),
            f"{prefix}_returns",
            *_rows(f"{prefix}_param", PARAM_ROWS, ("name", "type", "description", "required")),
        ]
    benign_lines: list[Any] = []
    for task in range(1, BENIGN_ROWS + 1):
        prefix = f"agent_benign{task}"
        benign_lines += [
            f"{prefix}_task",
            f"{prefix}_tool",
            *_matcher_lines(prefix, BENIGN_ARG_ROWS),
        ]
    return [
        (
            "Agent scenario",
            {
                "classes": ("agent-editor", *classes),
                "description": "The agent players attack through the slots: its system "
                "prompt, the user's task and its limits. Players never talk to it directly.",
                "fields": (
                    "agent_system_prompt",
                    "agent_task",
                    ("agent_max_steps", "agent_token_budget"),
                ),
            },
        ),
        (
            "Agent tools",
            {
                "classes": ("agent-editor", *classes),
                "description": "Simulated tools: each answers from its 'returns' template, "
                "never from a network or a file. Parameters become the tool's JSON Schema.",
                "fields": tuple(tool_lines),
            },
        ),
        (
            "Injection slots",
            {
                "classes": ("agent-editor", *classes),
                "description": "The content players write: an email, a web page, a document "
                "or a tool result. A slot reaches the agent through a tool's returns "
                "({{slot:<name>}}).",
                "fields": _rows("agent_slot", SLOT_ROWS, ("name", "kind", "template")),
            },
        ),
        (
            "Win rule",
            {
                "classes": ("agent-editor", *classes),
                "description": "A run wins when the agent calls this tool with every "
                "argument listed matching.",
                "fields": (
                    "agent_win_tool",
                    *_matcher_lines("agent_win", WIN_ARG_ROWS),
                    "agent_win_conceal",
                ),
            },
        ),
        (
            "Benign tasks",
            {
                "classes": ("agent-editor", *classes),
                "description": "Tasks the agent must still do with the defences on; "
                "'Try it' shows a defence that breaks one.",
                "fields": tuple(benign_lines),
            },
        ),
        (
            "Agent defences",
            {
                "classes": ("agent-editor", *classes),
                "description": "Layers around the agent's tool calls, beside the text "
                "defences above (which an agent challenge does not use).",
                "fields": (
                    *_rows("agent_guard", GUARD_ROWS, ("tool", "arg", "allow")),
                    "agent_spotlight_on",
                    ("agent_tool_check_on", "agent_tool_check_judge_model"),
                    "agent_max_tool_calls",
                ),
            },
        ),
    ]


def placeholder_help(agent: dict, tool: dict) -> str:
    """The returns help naming the placeholders this tool can use (the JS keeps it current)."""
    parameters = tool.get("parameters") if isinstance(tool.get("parameters"), dict) else {}
    names = [f"{{{{arg:{name}}}}}" for name in (parameters.get("properties") or {})]
    names += [
        f"{{{{slot:{slot.get('name')}}}}}"
        for slot in agent.get("slots") or []
        if isinstance(slot, dict) and slot.get("name")
    ]
    return RETURNS_HELP + (" Here: " + ", ".join(names) + "." if names else "")


# --- stored scenario -> rows --------------------------------------------------------------


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _matcher_initial(prefix: str, args: dict, rows: int) -> dict[str, Any]:
    initial: dict[str, Any] = {}
    for row, (field, matcher) in enumerate(list(args.items())[:rows], start=1):
        if not isinstance(matcher, dict) or len(matcher) != 1:
            continue
        ((kind, value),) = matcher.items()
        initial[f"{prefix}_arg{row}_field"] = field
        initial[f"{prefix}_arg{row}_matcher"] = kind
        initial[f"{prefix}_arg{row}_value"] = _value_text(value)
    return initial


def agent_fits_rows(agent: Any, defences: Any) -> bool:
    """Whether the rows can show the whole stored scenario (else the JSON box is the way)."""
    if not isinstance(agent, dict) or not agent:
        return True
    tools = agent.get("tools") or []
    guards = [
        layer
        for layer in defences or []
        if isinstance(layer, dict) and layer.get("type") == TOOL_GUARD
    ]
    return (
        len(tools) <= TOOL_ROWS
        and all(
            len((tool.get("parameters") or {}).get("properties") or {}) <= PARAM_ROWS
            for tool in tools
            if isinstance(tool, dict)
        )
        and len(agent.get("slots") or []) <= SLOT_ROWS
        and len((agent.get("win") or {}).get("args") or {}) <= WIN_ARG_ROWS
        and len(agent.get("benign_tasks") or []) <= BENIGN_ROWS
        and all(
            len((item.get("expect") or {}).get("args") or {}) <= BENIGN_ARG_ROWS
            for item in agent.get("benign_tasks") or []
            if isinstance(item, dict)
        )
        and len(guards) <= GUARD_ROWS
    )


def agent_initial(agent: Any, defences: Any) -> dict[str, Any]:
    """The rows' values for a stored scenario and its agent layers."""
    initial: dict[str, Any] = {}
    agent = agent if isinstance(agent, dict) else {}
    if agent:
        initial["agent_system_prompt"] = agent.get("system_prompt") or ""
        initial["agent_task"] = agent.get("task") or ""
        initial["agent_max_steps"] = agent.get("max_steps")
        initial["agent_token_budget"] = agent.get("token_budget")
    for tool_row, tool in enumerate((agent.get("tools") or [])[:TOOL_ROWS], start=1):
        if not isinstance(tool, dict):
            continue
        prefix = f"agent_tool{tool_row}"
        initial[f"{prefix}_name"] = tool.get("name") or ""
        initial[f"{prefix}_description"] = tool.get("description") or ""
        initial[f"{prefix}_returns"] = tool.get("returns") or ""
        parameters = tool.get("parameters") if isinstance(tool.get("parameters"), dict) else {}
        properties = parameters.get("properties") or {}
        required = parameters.get("required") or []
        for param_row, (name, schema) in enumerate(list(properties.items())[:PARAM_ROWS], start=1):
            schema = schema if isinstance(schema, dict) else {}
            inner = f"{prefix}_param{param_row}"
            initial[f"{inner}_name"] = name
            initial[f"{inner}_type"] = schema.get("type") or "string"
            initial[f"{inner}_description"] = schema.get("description") or ""
            initial[f"{inner}_required"] = name in required
    for row, slot in enumerate((agent.get("slots") or [])[:SLOT_ROWS], start=1):
        if isinstance(slot, dict):
            initial[f"agent_slot{row}_name"] = slot.get("name") or ""
            initial[f"agent_slot{row}_kind"] = slot.get("kind") or "email"
            initial[f"agent_slot{row}_template"] = slot.get("template", "{{text}}")
    win = agent.get("win") if isinstance(agent.get("win"), dict) else {}
    if win:
        initial["agent_win_tool"] = win.get("tool") or ""
        initial["agent_win_conceal"] = bool(win.get("conceal"))
        initial.update(_matcher_initial("agent_win", win.get("args") or {}, WIN_ARG_ROWS))
    for row, item in enumerate((agent.get("benign_tasks") or [])[:BENIGN_ROWS], start=1):
        if not isinstance(item, dict):
            continue
        expect = item.get("expect") if isinstance(item.get("expect"), dict) else {}
        initial[f"agent_benign{row}_task"] = item.get("task") or ""
        initial[f"agent_benign{row}_tool"] = expect.get("tool") or ""
        initial.update(
            _matcher_initial(f"agent_benign{row}", expect.get("args") or {}, BENIGN_ARG_ROWS)
        )
    layers = [layer for layer in defences or [] if isinstance(layer, dict)]
    guards = [layer for layer in layers if layer.get("type") == TOOL_GUARD]
    for row, guard in enumerate(guards[:GUARD_ROWS], start=1):
        initial[f"agent_guard{row}_tool"] = guard.get("tool") or ""
        initial[f"agent_guard{row}_arg"] = guard.get("arg") or ""
        initial[f"agent_guard{row}_allow"] = ", ".join(
            _value_text(value) for value in guard.get("allow") or []
        )
    kinds = {layer.get("type"): layer for layer in reversed(layers)}
    initial["agent_spotlight_on"] = SPOTLIGHT in kinds
    if LLM_TOOL_CHECK in kinds:
        initial["agent_tool_check_on"] = True
        config = kinds[LLM_TOOL_CHECK].get("judge_config") or {}
        initial["agent_tool_check_judge_model"] = config.get("judge_model") or ""
    if MAX_TOOL_CALLS in kinds:
        initial["agent_max_tool_calls"] = kinds[MAX_TOOL_CALLS].get("limit")
    return initial


# --- rows -> scenario ---------------------------------------------------------------------


class RowError(Exception):
    """A row the scenario cannot be built from: the field and what to write there."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def _number(text: str) -> int | float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    if not is_number(number):
        return None
    return int(number) if number.is_integer() and re.fullmatch(r"-?\d+", text) else number


def _typed_value(text: str, *, kind: str, param_type: str | None) -> Any:
    """The value a creator typed, as the type the matcher and the parameter need."""
    if kind in ("gt", "lt") or (kind == "equals" and param_type in NUMBER_TYPES):
        number = _number(text.strip())
        return text if number is None else number
    if kind == "equals" and param_type == "boolean" and text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    return text


class AgentRows:
    """The scenario built from a bound form's cleaned rows, with where each part came from
    (so that `agent_errors`' messages land on their rows)."""

    def __init__(self, cleaned: dict[str, Any], *, stored: Any, stored_defences: Any):
        self.cleaned = cleaned
        self.stored = stored if isinstance(stored, dict) else {}
        self.stored_defences = [item for item in stored_defences or [] if isinstance(item, dict)]
        self.errors: list[RowError] = []
        self.tool_rows: list[int] = []
        self.slot_rows: list[int] = []
        self.benign_rows: list[int] = []
        self.guard_rows: list[int] = []
        self.param_types: dict[str, dict[str, str]] = {}

    def _get(self, name: str) -> Any:
        value = self.cleaned.get(name)
        return value.strip() if isinstance(value, str) else value

    def _filled(self, *names: str) -> bool:
        return any(self._get(name) not in (None, "", False) for name in names)

    def empty(self) -> bool:
        return not any(
            self._filled(name)
            for name in agent_form_fields()
            if not name.endswith(("_type", "_kind", "_matcher"))
        )

    def _stored_tool(self, name: str) -> dict:
        for tool in self.stored.get("tools") or []:
            if isinstance(tool, dict) and tool.get("name") == name:
                return tool
        return {}

    def _parameters(self, tool_row: int, name: str) -> dict:
        before = self._stored_tool(name).get("parameters")
        before = before if isinstance(before, dict) else {}
        before_properties = before.get("properties")
        before_properties = before_properties if isinstance(before_properties, dict) else {}
        properties: dict[str, Any] = {}
        required: list[str] = []
        types: dict[str, str] = {}
        for param_row in range(1, PARAM_ROWS + 1):
            inner = f"agent_tool{tool_row}_param{param_row}"
            param = self._get(f"{inner}_name")
            if not param:
                if self._filled(f"{inner}_description", f"{inner}_required"):
                    self.errors.append(RowError(f"{inner}_name", "Name this parameter."))
                continue
            if param in properties:
                self.errors.append(RowError(f"{inner}_name", f"'{param}' is used twice."))
                continue
            kept = before_properties.get(param)
            schema = {**(kept if isinstance(kept, dict) else {})}
            schema["type"] = self._get(f"{inner}_type") or "string"
            schema.pop("description", None)
            if self._get(f"{inner}_description"):
                schema["description"] = self._get(f"{inner}_description")
            properties[param] = schema
            types[param] = schema["type"]
            if self._get(f"{inner}_required"):
                required.append(param)
        self.param_types[name] = types
        parameters = {
            **{k: v for k, v in before.items() if k not in ("properties", "required")},
            "type": "object",
            "properties": properties,
        }
        if required or "required" in before:
            parameters["required"] = required
        return parameters

    def _matchers(self, prefix: str, rows: int, tool: str) -> dict[str, Any]:
        args: dict[str, Any] = {}
        types = self.param_types.get(tool, {})
        for row in range(1, rows + 1):
            field = self._get(f"{prefix}_arg{row}_field")
            text = self.cleaned.get(f"{prefix}_arg{row}_value") or ""
            if not field:
                if text.strip():
                    self.errors.append(
                        RowError(f"{prefix}_arg{row}_field", "Name the argument this value is for.")
                    )
                continue
            if field in args:
                self.errors.append(
                    RowError(f"{prefix}_arg{row}_field", f"'{field}' is listed twice.")
                )
                continue
            kind = self._get(f"{prefix}_arg{row}_matcher") or "equals"
            if not text.strip():
                self.errors.append(RowError(f"{prefix}_arg{row}_value", "Type the value."))
                continue
            args[field] = {kind: _typed_value(text, kind=kind, param_type=types.get(field))}
        return args

    def agent(self) -> dict[str, Any]:
        if self.empty():
            return {}
        agent: dict[str, Any] = {
            "system_prompt": self.cleaned.get("agent_system_prompt") or "",
            "task": self.cleaned.get("agent_task") or "",
            "tools": [],
            "slots": [],
        }
        for row in range(1, TOOL_ROWS + 1):
            prefix = f"agent_tool{row}"
            names = [f"{prefix}_{key}" for key in ("name", "description", "returns")]
            names += [f"{prefix}_param{param}_name" for param in range(1, PARAM_ROWS + 1)]
            if not self._filled(*names):
                continue
            name = self._get(f"{prefix}_name") or ""
            agent["tools"].append(
                {
                    "name": name,
                    "description": self._get(f"{prefix}_description") or "",
                    "parameters": self._parameters(row, name),
                    "returns": self.cleaned.get(f"{prefix}_returns") or "",
                }
            )
            self.tool_rows.append(row)
        for row in range(1, SLOT_ROWS + 1):
            prefix = f"agent_slot{row}"
            if not self._filled(f"{prefix}_name", f"{prefix}_template"):
                continue
            agent["slots"].append(
                {
                    "name": self._get(f"{prefix}_name") or "",
                    "kind": self._get(f"{prefix}_kind") or "email",
                    "template": self.cleaned.get(f"{prefix}_template") or "{{text}}",
                }
            )
            self.slot_rows.append(row)
        win_tool = self._get("agent_win_tool") or ""
        agent["win"] = {
            "tool": win_tool,
            "args": self._matchers("agent_win", WIN_ARG_ROWS, win_tool),
            "conceal": bool(self._get("agent_win_conceal")),
        }
        benign = []
        for row in range(1, BENIGN_ROWS + 1):
            prefix = f"agent_benign{row}"
            names = [f"{prefix}_task", f"{prefix}_tool"]
            names += [f"{prefix}_arg{arg}_field" for arg in range(1, BENIGN_ARG_ROWS + 1)]
            if not self._filled(*names):
                continue
            tool = self._get(f"{prefix}_tool") or ""
            benign.append(
                {
                    "task": self.cleaned.get(f"{prefix}_task") or "",
                    "expect": {
                        "tool": tool,
                        "args": self._matchers(prefix, BENIGN_ARG_ROWS, tool),
                    },
                }
            )
            self.benign_rows.append(row)
        agent["benign_tasks"] = benign
        max_steps = self._get("agent_max_steps")
        agent["max_steps"] = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        agent["token_budget"] = self._get("agent_token_budget")
        return agent

    def layers(self) -> list[dict[str, Any]]:
        """The agent layers the rows describe. Keys the rows do not show (a message, a
        judge's settings) are kept from the stored layer of the same kind."""
        stored = self.stored_defences
        layers: list[dict[str, Any]] = []
        guards_before = [layer for layer in stored if layer.get("type") == TOOL_GUARD]
        for row in range(1, GUARD_ROWS + 1):
            prefix = f"agent_guard{row}"
            if not self._filled(f"{prefix}_tool", f"{prefix}_arg", f"{prefix}_allow"):
                continue
            tool = self._get(f"{prefix}_tool") or ""
            arg = self._get(f"{prefix}_arg") or ""
            types = self.param_types.get(tool, {})
            allow = [
                _typed_value(item.strip(), kind="equals", param_type=types.get(arg))
                for item in (self.cleaned.get(f"{prefix}_allow") or "").split(",")
                if item.strip()
            ]
            before = guards_before[row - 1] if row - 1 < len(guards_before) else {}
            layers.append({**before, "type": TOOL_GUARD, "tool": tool, "arg": arg, "allow": allow})
            self.guard_rows.append(row)
        layers += guards_before[GUARD_ROWS:]

        def kept(kind: str) -> dict[str, Any]:
            return next((layer for layer in stored if layer.get("type") == kind), {})

        if self._get("agent_spotlight_on"):
            layers.append({**kept(SPOTLIGHT), "type": SPOTLIGHT})
        if self._get("agent_tool_check_on"):
            layer = {**kept(LLM_TOOL_CHECK), "type": LLM_TOOL_CHECK}
            config = {**(layer.get("judge_config") or {})}
            config.pop("judge_model", None)
            if self._get("agent_tool_check_judge_model"):
                config["judge_model"] = self._get("agent_tool_check_judge_model")
            layer.pop("judge_config", None)
            if config:
                layer["judge_config"] = config
            layers.append(layer)
        if self._get("agent_max_tool_calls") is not None:
            layers.append(
                {
                    **kept(MAX_TOOL_CALLS),
                    "type": MAX_TOOL_CALLS,
                    "limit": self._get("agent_max_tool_calls"),
                }
            )
        # In the stored order of the kinds, so that a scenario saved untouched is unchanged.
        order = [layer.get("type") for layer in stored if is_agent_layer(layer)]
        return sorted(
            layers,
            key=lambda layer: order.index(layer["type"]) if layer["type"] in order else len(order),
        )

    # --- where a message of agent_errors belongs ----------------------------------------

    def _arg_row(self, prefix: str, rows: int, field: str) -> int:
        for row in range(1, rows + 1):
            if self._get(f"{prefix}_arg{row}_field") == field:
                return row
        return 1

    def field_for(self, message: str) -> tuple[str | None, str]:
        """The form field an `agent_errors` message belongs on, and the message without the
        path the row already says."""
        path, _, said = message.partition(": ")
        if not said:
            return None, message
        parts = re.findall(r"\[\d+\]|[A-Za-z0-9_]+", path)
        if not parts or parts[0] != "agent":
            return None, message
        parts = parts[1:]
        if not parts:
            return None, message
        head = parts[0]
        index = int(parts[1][1:-1]) if len(parts) > 1 and parts[1].startswith("[") else None
        rest = [part for part in parts[2 if index is not None else 1 :] if part != "args"]
        if head in ("system_prompt", "task", "max_steps", "token_budget"):
            return f"agent_{head}", said
        if head == "tools":
            if index is None or index >= len(self.tool_rows):
                return "agent_tool1_name", said
            prefix = f"agent_tool{self.tool_rows[index]}"
            key = rest[0] if rest else "name"
            if key == "parameters":
                return f"{prefix}_param1_name", said
            return f"{prefix}_{key if key in ('name', 'description', 'returns') else 'name'}", said
        if head == "slots":
            if index is None:
                named = re.match(r"'([^']+)'", said)
                for row in self.slot_rows:
                    if named and self._get(f"agent_slot{row}_name") == named.group(1):
                        return f"agent_slot{row}_template", said
                return "agent_slot1_name", said
            if index >= len(self.slot_rows):
                return "agent_slot1_name", said
            key = rest[0] if rest else "name"
            slot_key = key if key in ("name", "kind", "template") else "name"
            return f"agent_slot{self.slot_rows[index]}_{slot_key}", said
        if head == "win":
            return self._rule_field("agent_win", WIN_ARG_ROWS, rest), said
        if head == "benign_tasks":
            if index is None or index >= len(self.benign_rows):
                return "agent_benign1_task", said
            prefix = f"agent_benign{self.benign_rows[index]}"
            if rest and rest[0] == "task":
                return f"{prefix}_task", said
            return self._rule_field(prefix, BENIGN_ARG_ROWS, rest[1:] if rest else []), said
        return None, message

    def _rule_field(self, prefix: str, rows: int, rest: list[str]) -> str:
        if not rest or rest[0] == "tool":
            return f"{prefix}_tool"
        if rest[0] == "conceal":
            return "agent_win_conceal"
        row = self._arg_row(prefix, rows, rest[0])
        return f"{prefix}_arg{row}_{'value' if len(rest) > 1 else 'field'}"

    def layer_field(self, number: int) -> str | None:
        """The field of the `number`-th (1-based) agent layer the rows built, if a guard."""
        if 1 <= number <= len(self.guard_rows):
            return f"agent_guard{self.guard_rows[number - 1]}_tool"
        return None


def is_agent_layer(layer: Any) -> bool:
    return isinstance(layer, dict) and layer.get("type") in AGENT_DEFENCE_KINDS
