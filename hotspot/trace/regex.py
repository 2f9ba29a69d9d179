"""A `kernel_include_regex` that selects exactly one kernel name out of a trace's names.

rocprofv3 applies the regex with search semantics to the (possibly truncated) demangled name, so a
regex is good when `re.search` matches its own name and no other name in the same trace. Escaping
touches only regex metacharacters so the result reads like the name and means the same thing to
Python `re` and to the ECMAScript std::regex rocprofv3 uses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_META = frozenset("\\.^$*+?()[]{}|")
# Where a readable prefix may stop: before the argument list or the template argument list.
_STEM_ENDS = "(<"
_ANON = "(anonymous namespace)"


def escape(text: str) -> str:
    return "".join("\\" + ch if ch in _META else ch for ch in text)


def _unique(pattern: str, name: str, others: set[str]) -> bool:
    rx = re.compile(pattern)
    return rx.search(name) is not None and not any(rx.search(o) for o in others)


def _first(name: str, char: str) -> int:
    """First `char` after position 0 that is not part of "(anonymous namespace)"; -1 if none."""
    i = name.find(char, 1)
    while i > 0 and name.startswith(_ANON, i):
        i = name.find(char, i + len(_ANON))
    return i


def _candidates(name: str) -> list[str]:
    found: list[str] = []
    cuts = sorted({i for i in (_first(name, c) for c in _STEM_ENDS) if i > 0})
    if not cuts:
        found.append("^" + escape(name) + "$")     # plain symbol: say it exactly
    else:
        for cut in cuts:                          # stem, then up to the argument list
            found.append("^" + escape(name[:cut]))
        found.append("^" + escape(name) + "$")
    # `$` also matches before one trailing newline; the look-ahead rules that out (ECMAScript has it).
    found.append("^" + escape(name) + "(?!\\n)$")
    return found


def kernel_regex(name: str, all_names: Iterable[str]) -> str:
    """The most readable candidate that matches `name` and no other name in `all_names`."""
    others = {n for n in all_names if n != name}
    for pattern in _candidates(name):
        if _unique(pattern, name, others):
            return pattern
    # Unreachable for distinct names: the last candidate matches `name` only.
    raise ValueError(f"no unique regex for kernel name {name!r}")


def kernel_regexes(names: Iterable[str]) -> dict[str, str]:
    """`kernel_regex` for every distinct name, checked against all the others."""
    distinct = set(names)
    return {n: kernel_regex(n, distinct) for n in sorted(distinct)}
