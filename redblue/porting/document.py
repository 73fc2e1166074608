"""The event file as text: reading YAML with the line of every node, writing it in one
stable form, and the problems an import reports with their lines."""

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from core.errors import ApplicationError

Path = tuple[str | int, ...]
_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_DOCUMENT_CHARS = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_INTEGER = 2**63 - 1
# How many problems the message itself lists; `fields` holds all of them.
MESSAGE_PROBLEMS = 5


@dataclass(frozen=True)
class Problem:
    line: int | None
    path: Path
    message: str

    def where(self) -> str:
        return path_text(self.path) or "(file)"

    def __str__(self) -> str:
        prefix = f"line {self.line}: " if self.line else ""
        return f"{prefix}{self.where()}: {self.message}"


class EventFileInvalid(ApplicationError):
    """Everything wrong with a file, each problem with the line of the node it is about."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.line or 0, path_text(p.path)))
        shown = "; ".join(str(problem) for problem in self.problems[:MESSAGE_PROBLEMS])
        more = len(self.problems) - MESSAGE_PROBLEMS
        count = f"{len(self.problems)} problem" + ("s" if len(self.problems) != 1 else "")
        message = f"The file was not imported ({count}): {shown.rstrip('.')}" + (
            f"; and {more} more." if more > 0 else "."
        )
        fields: dict[str, list[str]] = {}
        for problem in self.problems:
            prefix = f"line {problem.line}: " if problem.line else ""
            fields.setdefault(problem.where(), []).append(prefix + problem.message)
        super().__init__(message, fields=fields)


def path_text(path: Path) -> str:
    """`challenges[2].defences[0].pattern`: where a value is, as a person reads it."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


# --- Reading -------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """Safe YAML without aliases (a few lines of them can expand to gigabytes) and without
    implicit timestamps (dates stay the ISO 8601 text the schema and serializers expect)."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "anchors and aliases (*name) are not accepted", event.start_mark
            )
        return super().compose_node(parent, index)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass
class EventDocument:
    data: dict[str, Any]
    root: yaml.Node

    def line(self, path: Path) -> int:
        return line_of(self.root, path)

    def problem(self, path: Path, message: str) -> Problem:
        return Problem(self.line(path), path, message)


def event_parse(text: str) -> EventDocument:
    """The file's data and node tree; a syntax error or an unsafe value is refused here."""
    if len(text) > MAX_DOCUMENT_CHARS:
        raise EventFileInvalid(
            [Problem(None, (), f"The file is larger than {MAX_DOCUMENT_CHARS} characters.")]
        )
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise EventFileInvalid([Problem(1, (), "The file is empty.")])
        problems = list(_node_problems(root, (), 0))
        if problems:
            raise EventFileInvalid(problems)
        data = loader.construct_document(root)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        reason = " ".join(part for part in (error.context, error.problem) if part)
        begun = error.context_mark
        if begun and mark and begun.line != mark.line:
            reason += f" (it began on line {begun.line + 1})"
        raise EventFileInvalid(
            [Problem(mark.line + 1 if mark else None, (), f"Not valid YAML: {reason}.")]
        ) from None
    except yaml.YAMLError as error:
        raise EventFileInvalid([Problem(None, (), f"Not valid YAML: {error}.")]) from None
    except RecursionError:
        raise EventFileInvalid([Problem(None, (), "The file is nested too deeply.")]) from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise EventFileInvalid([Problem(1, (), "The file must be a mapping (key: value, …).")])
    problems = list(_value_problems(data, (), root))
    if problems:
        raise EventFileInvalid(problems)
    return EventDocument(data=data, root=root)


def _node_problems(node: yaml.Node, path: Path, depth: int) -> Iterable[Problem]:
    line = node.start_mark.line + 1
    if depth > MAX_DEPTH:
        yield Problem(line, path, f"Nested deeper than {MAX_DEPTH} levels.")
        return
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                yield Problem(key.start_mark.line + 1, path, "A key must be plain text.")
                continue
            if key.value in seen:
                yield Problem(key.start_mark.line + 1, (*path, key.value), "A repeated key.")
            seen.add(key.value)
            yield from _node_problems(key, (*path, key.value), depth + 1)
            yield from _node_problems(value, (*path, key.value), depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _node_problems(item, (*path, index), depth + 1)
    elif "\x00" in node.value:
        yield Problem(line, path, "Text may not hold a NUL character.")
    elif _SURROGATE.search(node.value):
        # "\ud800" escapes give text no UTF-8 encoder (nor PostgreSQL) takes.
        yield Problem(line, path, "Text may not hold a lone surrogate (\\ud800–\\udfff).")


def _value_problems(value: Any, path: Path, root: yaml.Node) -> Iterable[Problem]:
    # What PostgreSQL's jsonb cannot store: refused with a line, not a 500 later.
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                yield Problem(line_of(root, path), path, f"The key {key!r} must be text.")
                continue
            yield from _value_problems(item, (*path, key), root)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _value_problems(item, (*path, index), root)
    elif isinstance(value, float) and not math.isfinite(value):
        yield Problem(line_of(root, path), path, "Numbers must be finite.")
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INTEGER:
        yield Problem(line_of(root, path), path, "The number is too large.")
    elif isinstance(value, bytes):
        yield Problem(line_of(root, path), path, "Binary values are not accepted.")


def _deepest_node(root: yaml.Node, path: Path) -> yaml.Node:
    node = root
    for part in path:
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next(
                (value for key, value in node.value if getattr(key, "value", None) == part),
                None,
            )
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            child = node.value[part] if 0 <= part < len(node.value) else None
        if child is None:
            break
        node = child
    return node


def line_of(root: yaml.Node, path: Path) -> int:
    """The line of the node at `path`, or of the deepest node on the way that exists (a
    missing key is reported at the mapping that should hold it)."""
    return _deepest_node(root, path).start_mark.line + 1


def key_line(root: yaml.Node, path: Path, key: str) -> int:
    """The line of `key` itself in the mapping at `path`: an unknown key is pointed at."""
    node = _deepest_node(root, path)
    for key_node, _ in node.value if isinstance(node, yaml.MappingNode) else []:
        if getattr(key_node, "value", None) == key:
            return key_node.start_mark.line + 1
    return node.start_mark.line + 1


# --- Writing -------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Prompts and instructions read as written; PyYAML falls back to quoting when a
    # block cannot hold the text exactly (trailing spaces, control characters).
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def event_dump(data: dict[str, Any]) -> str:
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=4096,
        indent=2,
        default_flow_style=False,
    )
