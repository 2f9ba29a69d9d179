"""The MCP tools: the ones each command's spec declares (hotspot/commandspec.py `ToolSpec`), their
input schemas read from the command's own click parameters (the options declared once in
hotspot/commands/), and a tool call's arguments turned back into that command's argument list.
Nothing here knows an option the CLI does not declare.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import typer

from hotspot.clihelp.index import COMMANDS
from hotspot.commandspec import ToolSpec
from hotspot.errors import UsageError
from hotspot.mcp import paging

BRIEF, FULL = "brief", "full"
STDOUT = "-"  # hotspot/outfile.py: the output path that means stdout on the command line
DETAIL_PARAM = "detail_level"


# Parameters no tool exposes: the output format (always JSON), `--brief` (the detail level says it).
HIDDEN = frozenset({"fmt", "brief"})

# Every command's MCP tools (its SPEC's `tools`), listed by their rank.
SPECS: tuple[ToolSpec, ...] = tuple(sorted(
    (tool for module, _, _, _ in COMMANDS.values() for tool in importlib.import_module(module).SPEC.mcp_tools()),
    key=lambda tool: tool.rank))
BY_NAME = {s.name: s for s in SPECS}


_CLICK: dict[str, Any] = {}


def click_command(command: str) -> Any:
    """The click command the CLI runs for `command` (built once per process)."""
    if command not in _CLICK:
        app = typer.Typer(pretty_exceptions_enable=False, rich_markup_mode=None)
        app.callback()(lambda: None)
        importlib.import_module(COMMANDS[command][0]).register(app)
        group = typer.main.get_command(app)
        _CLICK[command] = group.commands[command]  # type: ignore[attr-defined]  # a group: the app has a callback
    return _CLICK[command]


def exposed(spec: ToolSpec) -> list[Any]:
    command = click_command(spec.command)
    for word in spec.words:  # a group's subcommand (`export perfetto`), or sweep's (`sweep status`)
        subs = getattr(command, "commands", None) or getattr(command, "subcommands", None) or {}
        command = subs.get(word, command)
    params = [p for p in command.params if p.name not in HIDDEN | spec.hidden]
    if spec.only is not None:
        params = [p for p in params if p.name in spec.only]
    return params


def arg_name(spec: ToolSpec, param: Any) -> str:
    """The tool argument of a CLI parameter: its long option name (`--max-file-mb` ->
    `max_file_mb`), or the argument's name."""
    if param.name in spec.rename:
        return spec.rename[param.name]
    longs = [o for o in param.opts if o.startswith("--")]
    name: str = longs[0][2:] if longs else param.name
    return name.replace("-", "_")


_KINDS = {"int": "integer", "integer": "integer", "float": "number", "bool": "boolean",
          "boolean": "boolean"}


def _value_schema(param: Any) -> dict[str, Any]:
    kind = param.type
    choices = getattr(kind, "choices", None)
    if choices is not None:
        return {"type": "string", "enum": [str(getattr(c, "value", c)) for c in choices]}
    return {"type": _KINDS.get(str(getattr(kind, "name", "")), "string")}


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    """JSON Schema of the tool's arguments, from the command's click parameters."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in exposed(spec):
        name = arg_name(spec, p)
        schema = _value_schema(p)
        many = (p.multiple or p.nargs == -1) and p.name not in spec.single
        if many:
            schema = {"type": "array", "items": schema}
        text = spec.help.get(name) or getattr(p, "help", None)
        if text:
            schema["description"] = text
        default = p.default
        if default is not None and not callable(default) and not many:
            schema["default"] = getattr(default, "value", default)
        props[name] = schema
        if p.required or p.name in spec.single or p.name in spec.required or name in spec.required:
            required.append(name)
    if spec.detail:
        props[DETAIL_PARAM] = {"type": "string", "enum": [BRIEF, FULL], "default": BRIEF,
                               "description": "brief: the verdict, trust and top plan items (under "
                                              "4 KB, implies the plan); full: the whole JSON document "
                                              "(paged, see cursor)."}
    props.update(paging.schema_properties())
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


def description(spec: ToolSpec) -> str:
    return spec.description or str(click_command(spec.command).help or spec.name)


def _check(name: str, schema: Mapping[str, Any], value: Any) -> None:
    kind = schema.get("type")
    if kind == "array":
        if not isinstance(value, list):
            raise UsageError(f"argument '{name}' must be a list", "pass a JSON array")
        for v in value:
            _check(name, schema["items"], v)
        return
    ok = {"boolean": lambda v: isinstance(v, bool),
          "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          "string": lambda v: isinstance(v, str)}[str(kind)](value)
    if not ok:
        raise UsageError(f"argument '{name}' must be a {kind}, got {type(value).__name__}",
                         "see the tool's input schema")
    if "enum" in schema and value not in schema["enum"]:
        raise UsageError(f"argument '{name}' is {value!r}: expected one of {', '.join(schema['enum'])}",
                         "see the tool's input schema")


# A tool's schema and its click parameters with their argument names, built once per tool: every
# call checks its arguments against them, and they are fixed once the command is imported.
_CHECKED: dict[str, tuple[dict[str, Any], list[tuple[Any, str]]]] = {}


def _checked(spec: ToolSpec) -> tuple[dict[str, Any], list[tuple[Any, str]]]:
    got = _CHECKED.get(spec.name)
    if got is None:
        got = _CHECKED[spec.name] = (input_schema(spec), [(p, arg_name(spec, p)) for p in exposed(spec)])
    return got


def to_argv(spec: ToolSpec, arguments: Mapping[str, Any]) -> list[str]:
    """The command line (without `hotspot`) that the CLI would run for these arguments, ending in
    `--format json`. Unknown arguments and wrong types are usage errors."""
    schema, params = _checked(spec)
    props = schema["properties"]
    unknown = sorted(set(arguments) - set(props))
    if unknown:
        raise UsageError(f"unknown argument(s) for {spec.name}: {', '.join(unknown)}",
                         f"arguments are: {', '.join(props)}")
    for name, value in arguments.items():
        if value is not None:
            _check(name, props[name], value)
    missing = [n for n in schema.get("required", []) if arguments.get(n) is None]
    if missing:
        raise UsageError(f"missing argument(s) for {spec.name}: {', '.join(missing)}",
                         "see the tool's input schema")
    for name in sorted(spec.outputs):
        if arguments.get(name) == STDOUT:  # the command line's stdout; an answer is JSON only
            raise UsageError(f"argument '{name}' is '-': {spec.name} writes a file over MCP",
                             f"pass {name}: a file path inside a root")
    words: list[str] = [spec.command, *spec.words]
    options: list[str] = []
    trailing: list[str] = []
    for p, name in params:
        value = arguments.get(name)
        if value is None:
            continue
        if p.param_type_name == "argument":
            values = value if isinstance(value, list) else [value]
            if p.nargs == -1 and p.name not in spec.single and spec.command == "collect":
                trailing = ["--", *map(str, values)]  # the profiled command, verbatim
            else:
                words += [str(v) for v in values]
            continue
        flag = next(o for o in p.opts if o.startswith("--"))
        if getattr(p, "is_flag", False):
            if value:
                options.append(flag)
            continue
        for v in value if isinstance(value, list) else [value]:
            options.append(f"{flag}={v}")
    level = arguments.get(DETAIL_PARAM) or BRIEF
    if spec.detail and level == BRIEF:
        options.append("--brief")
    return [*words, *options, "--format", "json", *trailing]


def path_values(spec: ToolSpec, arguments: Mapping[str, Any]) -> list[str]:
    """Every file or folder the call names (to check against the client's roots)."""
    out: list[str] = []
    for name in spec.paths:
        value = arguments.get(name)
        if value is None:
            continue
        out += [str(v) for v in (value if isinstance(value, list) else [value])]
    return out
