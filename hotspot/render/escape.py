"""The one place text and markdown views get their strings made printable.

A kernel name, a Source column or a path can hold a newline or an escape sequence (a folder
named `we\\nird`, a code.json edited by hand). Escaping the finished page is too late for
newlines (they are the page's own line breaks), and escaping in every renderer misses some: so the
Result is copied with every string value escaped (newlines too: `\\x0a`) before any text or
markdown renderer sees it. JSON and HTML are not passed through this (JSON keeps exact strings;
HTML escapes its own way).

A field that holds a whole text block printed as lines (the YAML file `collect --dry-run` would
write) says so with `field(metadata={BLOCK: True})`: its newlines stay line breaks, everything
else in it is escaped as usual.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import PurePath

from hotspot.diagnostics import printable

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
BLOCK = "text_block"  # dataclass field metadata key: a multi-line text block (newlines kept)


def escaped(value: object, _memo: dict[int, object] | None = None) -> object:
    """`value` with every string in it printable on one line; unchanged objects are returned as
    they are (a result without control characters costs one walk, no copies). Each object is
    walked once (`_memo` by id): an analysis shares rows between its views, and a structure
    reached again (or a cycle) gets the one copy, never a walk per path."""
    if isinstance(value, str):
        return printable(value, newlines=False) if _UNPRINTABLE.search(value) else value
    if value is None or isinstance(value, (bool, int, float, bytes)):
        return value
    if isinstance(value, PurePath):
        text = str(value)
        return printable(text, newlines=False) if _UNPRINTABLE.search(text) else value
    memo = {} if _memo is None else _memo
    key = id(value)
    if key in memo:
        return memo[key]
    memo[key] = value  # a cycle back to this object sees the original
    out = _escaped_container(value, memo)
    memo[key] = out
    return out


def _escaped_container(value: object, memo: dict[int, object]) -> object:
    if isinstance(value, list):
        items = [escaped(v, memo) for v in value]
        return items if any(a is not b for a, b in zip(items, value)) else value
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        titems = tuple(escaped(v, memo) for v in value)
        return titems if any(a is not b for a, b in zip(titems, value)) else value
    if isinstance(value, dict):
        pairs: dict[object, object] = {}
        changed = False
        for k, v in value.items():
            k2, v2 = escaped(k, memo), escaped(v, memo)
            changed = changed or k2 is not k or v2 is not v
            pairs[k2] = v2
        return pairs if changed else value
    parts = getattr(type(value), "__slots__", None)
    if parts is not None and callable(getattr(value, "json_value", None)):
        # a value written as another (hotspot/plan/api.py PlannedDispatch): rebuilt from its parts
        new = [escaped(getattr(value, p), memo) for p in parts]
        changed = any(n is not getattr(value, p) for n, p in zip(new, parts))
        return type(value)(*new) if changed else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if not f.init:
                continue
            old = getattr(value, f.name)
            new_value: object
            if f.metadata.get(BLOCK) and isinstance(old, str):
                new_value = printable(old, newlines=True) if _UNPRINTABLE.search(old) else old
            else:
                new_value = escaped(old, memo)
            if new_value is not old:
                changes[f.name] = new_value
        if not changes:
            return value
        copy = dataclasses.replace(value, **changes)
        for name, attr in (vars(value).items() if hasattr(value, "__dict__") else ()):
            if name not in changes and not hasattr(type(value), name) and name not in vars(copy):
                object.__setattr__(copy, name, attr)  # attributes set after __init__ (e.g. the plan)
        return copy
    return value
