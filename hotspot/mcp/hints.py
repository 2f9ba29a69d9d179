"""Errors in the caller's terms: a command's message and hint name its command-line flags
(`drop --brief`, `e.g. --arch gfx942`, `run 'hotspot plan --help'`); over MCP the caller passes
tool arguments, so the server says the same with the tool's arguments (`detail_level: "full"`,
`arch: "gfx942"`, the tool's input schema). The command line keeps its flags: only the server
rewrites, from the same click parameters the tool's schema is read from (hotspot/mcp/tool_schemas.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import orjson

from hotspot.commandspec import ToolSpec
from hotspot.result import dumps

# `--brief` is the detail level over MCP (hotspot/mcp/tool_schemas.py hides the flag itself)
_BRIEF_DROPPED = re.compile(r"\b(?:drop|remove|without) --brief\b")
_BRIEF = re.compile(r"(?<![\w-])--brief\b")
_HELP = re.compile(r"(?:run |see )?'?hotspot [\w ]*--help'?(?: for the options)?")
_DROPPED = re.compile(r"\b(?:drop|remove) (--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
_EXAMPLE = re.compile(r"\b(e\.g\.|use|pass) (--[a-z][a-z0-9-]*|-[a-zA-Z])[ =]([^\s,;)'\"]+)")
_FLAG = re.compile(r"(?<![\w-])'?(--[a-z][a-z0-9-]*|-[a-zA-Z])'?(?![\w-])")  # click quotes them


def _literal(value: str) -> str:
    """A value of an example as JSON: numbers as they are, the rest as strings."""
    try:
        float(value)
        return value
    except ValueError:
        return json.dumps(value)


def flag_names(spec: ToolSpec) -> dict[str, tuple[str, bool]]:
    """Every spelling of each option the tool exposes -> (its tool argument, whether it is a flag)."""
    from hotspot.mcp.tool_schemas import arg_name, exposed

    out: dict[str, tuple[str, bool]] = {}
    for param in exposed(spec):
        if getattr(param, "param_type_name", "") != "option":
            continue
        for opt in (*param.opts, *getattr(param, "secondary_opts", ())):
            out[opt] = (arg_name(spec, param), bool(getattr(param, "is_flag", False)))
    return out


def in_tool_terms(text: str, spec: ToolSpec, flags: Mapping[str, tuple[str, bool]]) -> str:
    """`text` with the command-line flags the tool exposes said as its arguments."""
    text = _HELP.sub(f"see the {spec.name} tool's input schema", text)
    if spec.detail:
        text = _BRIEF_DROPPED.sub('pass `detail_level: "full"`', text)
        text = _BRIEF.sub('`detail_level: "brief"`', text)

    def dropped(m: re.Match[str]) -> str:
        known = flags.get(m.group(1))
        return f"leave out `{known[0]}`" if known else m.group(0)

    def example(m: re.Match[str]) -> str:
        known = flags.get(m.group(2))
        if known is None or known[1]:
            return m.group(0)
        return f"{m.group(1)} `{known[0]}: {_literal(m.group(3))}`"

    def flag(m: re.Match[str]) -> str:
        known = flags.get(m.group(1))
        if known is None:
            return m.group(0)
        return f"`{known[0]}: true`" if known[1] else f"`{known[0]}`"

    text = _DROPPED.sub(dropped, text)
    text = _EXAMPLE.sub(example, text)
    return _FLAG.sub(flag, text)


def is_error_envelope(document: bytes) -> bool:
    """An error envelope (`error` with code, message and hint), not a result document whose
    exit code is not 0 (which carries `data`)."""
    try:
        doc: Any = orjson.loads(document)
    except orjson.JSONDecodeError:
        return True  # not JSON: passed on as it is, never paged
    return not isinstance(doc, dict) or isinstance(doc.get("error"), dict)


def translate(document: bytes, spec: ToolSpec) -> bytes:
    """An error envelope with its message and hint in the tool's terms (unchanged when they name
    no flag of the tool); any other document as it is."""
    try:
        doc: Any = orjson.loads(document)
    except orjson.JSONDecodeError:
        return document
    error = doc.get("error") if isinstance(doc, dict) else None
    if not isinstance(error, dict):
        return document
    flags = flag_names(spec)
    changed = False
    for key in ("message", "hint"):
        value = error.get(key)
        if isinstance(value, str):
            said = in_tool_terms(value, spec, flags)
            if said != value:
                error[key] = said
                changed = True
    return dumps(doc, pretty=False) if changed else document
