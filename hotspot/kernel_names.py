"""Kernel names in tables and one-line messages: short forms that stay distinct (formatting only;
JSON keeps the full name).

A demangled C++ kernel name is hundreds of characters; its base name alone (`reduce_kernel<…>`)
is the same for every instantiation of a template. A column of names gets, per row, the least
detail that tells it from the other rows: template arguments opened level by level (namespaces
dropped), then the parameter list; a form still wider than its room keeps its start
and the part where it differs from its nearest neighbour, elided around it."""

from __future__ import annotations

import re
from collections.abc import Sequence

ELLIPSIS = "…"
_QUALIFIER = re.compile(r"(?<![\w:])(?:[A-Za-z_]\w*::)+(?=[A-Za-z_~])")
_OPEN = {"<": ">", "(": ")", "{": "}"}


def _matching(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start` (any of <, (, {), or -1."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in _OPEN:
            depth += 1
        elif c in ">)}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _without_params(text: str) -> str:
    """The name without its trailing parameter list `(int, float*)` (and a trailing ` const`)."""
    body = text.removesuffix(" const")
    if not body.endswith(")"):
        return text
    depth = 0
    for i in range(len(body) - 1, -1, -1):
        c = body[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                return body[:i] if i > 0 else text
    return text


def _lambdas(text: str) -> str:
    """`{lambda(int, bool)#1}` -> `{lambda#1}`: the parameters of a lambda tell nothing apart."""
    out, i = [], 0
    while True:
        j = text.find("{lambda(", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        k = _matching(text, j + 7)
        if k < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j] + "{lambda")
        i = k + 1


def _unqualified(text: str) -> str:
    """Namespaces dropped (`at::native::` is on every PyTorch kernel, on its name and on each of
    its template arguments): a table row has room for what differs, not for them."""
    return _QUALIFIER.sub("", text)


def compact(name: str) -> str:
    """The full name with its noise removed: no `void `, no namespaces, lambdas without
    parameters, `>>` for `> >`."""
    text = name.strip()
    if text.startswith("void "):
        text = text[5:]
    if not re.match(r"[A-Za-z_:~]", text):
        return name.strip()  # not a C++ name (a path, a hash): nothing to simplify
    text = text.replace("(anonymous namespace)::", "")
    text = _lambdas(text)
    text = _unqualified(text)
    while "> >" in text:
        text = text.replace("> >", ">>")
    return text


def short_kernel_name(name: str) -> str:
    """One kernel name on its own (a title, a heading, a line about one kernel): no `void `, no
    parameter list, template arguments elided (`ck::kernel_batched_gemm<…>`); namespaces kept, as
    nothing beside it needs the room. A column of names takes `distinct` instead: this form is the
    same for every instantiation of a template. The full name stays in JSON."""
    text = name.strip().removeprefix("void ")
    if not re.match(r"[A-Za-z_:~]", text):
        return name  # not a C++ name: nothing to elide
    return _depth_limited(_without_params(text), 0).strip() or name


def _depth_limited(text: str, depth: int) -> str:
    """`text` with template argument lists nested deeper than `depth` shown as `<…>`."""
    out: list[str] = []
    level = 0
    for c in text:
        if c == "<":
            level += 1
            if level == depth + 1:
                out.append("<" + ELLIPSIS + ">")
            if level <= depth:
                out.append(c)
        elif c == ">" and level:
            if level <= depth:
                out.append(c)
            level -= 1
        elif level <= depth:
            out.append(c)
    return "".join(out)


def _nesting(text: str) -> int:
    """The deepest nesting of template argument lists in `text`."""
    deepest = level = 0
    for c in text:
        if c == "<":
            level += 1
            deepest = max(deepest, level)
        elif c == ">" and level:
            level -= 1
    return deepest


def forms(name: str) -> list[str]:
    """The short forms of a kernel name, least detail first: base name with template arguments
    elided, then one more level of them at a time, then the parameter list. A name that is not a
    C++ signature has one form, itself."""
    note = ""
    if (m := re.search(r" \([^()]*\)$", name.strip())) is not None:
        # ` (runtime)`: a note after the name, not a parameter list (those follow without a space)
        note, name = m.group(0), name.strip()[: m.start()]
    full = compact(name)
    base = _without_params(full)
    out: list[str] = []
    for d in range(_nesting(base) + 1):  # by depth, not by count: a long flat list is one level
        f = _depth_limited(base, d).strip()
        if f and (not out or out[-1] != f):
            out.append(f)
    if full != base and (not out or out[-1] != full):
        out.append(full)
    return [f + note for f in out] if out else [name + note]


def distinct(names: Sequence[str]) -> list[str]:
    """Per name the least detailed form that no other, different name shares: rows of a table
    stay distinguishable (`reduce_kernel<512, 1, ReduceOp<…>>` beside `reduce_kernel<4, …>`)."""
    all_forms = [forms(n) for n in names]
    level = [0] * len(names)
    while True:
        groups: dict[str, set[str]] = {}
        for i, n in enumerate(names):
            groups.setdefault(all_forms[i][level[i]], set()).add(n)
        moved = False
        for i, n in enumerate(names):
            if len(groups[all_forms[i][level[i]]]) > 1 and level[i] + 1 < len(all_forms[i]):
                level[i] += 1
                moved = True
        if not moved:
            return [all_forms[i][level[i]] for i in range(len(names))]


def column(cells: Sequence[str]) -> list[str]:
    """A table column of kernel names in their `distinct` short forms (blank cells stay blank):
    two instantiations of one template stay two rows."""
    filled = [i for i, c in enumerate(cells) if c]
    out = list(cells)
    for i, v in zip(filled, distinct([cells[i] for i in filled])):
        out[i] = v
    return out


def first_difference(text: str, others: Sequence[str]) -> int:
    """Where `text` first differs from the most similar of `others` (0 when there are none)."""
    best = 0
    for o in others:
        if o == text:
            continue
        n = 0
        for a, b in zip(text, o):
            if a != b:
                break
            n += 1
        best = max(best, n)
    return best


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _nearest_differences(cells: Sequence[str]) -> dict[str, int]:
    """first_difference of every cell against all the others, in sorted order: the most similar
    cell is a neighbour there (n log n, not n²: a table may have thousands of rows)."""
    uniq = sorted(set(cells))
    out = {}
    for k, c in enumerate(uniq):
        near = [uniq[j] for j in (k - 1, k + 1) if 0 <= j < len(uniq)]
        out[c] = max((_common_prefix(c, o) for o in near), default=0)
    return out


def elide_around(text: str, width: int, at: int, keep: int = 0) -> str:
    """`text` in `width` characters keeping its first `keep` characters (a `#row` prefix) and
    position `at` (where it differs from its neighbours): the middle is elided when that keeps
    `at`, else the start, `…`, a window around `at`, and `…` when more follows."""
    if len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    keep = min(keep, width - 2)
    head = max(keep, width // 2)
    tail = width - 1 - head
    if at < head or at >= len(text) - tail:
        return text[:head] + ELLIPSIS + (text[len(text) - tail:] if tail else "")
    start = max(keep, min(width // 3, len(_base(text))))
    room = width - start - 1
    lo = max(start, at - room // 3)
    if lo + room >= len(text):
        return text[:start] + ELLIPSIS + text[len(text) - room:]
    return text[:start] + ELLIPSIS + text[lo:lo + room - 1] + ELLIPSIS


def _base(text: str) -> str:
    cut = min((i for i in (text.find("<"), text.find("(")) if i >= 0), default=len(text))
    return text[:cut]


def fit_distinct(cells: Sequence[str], width: int, keep: Sequence[int] | None = None) -> list[str]:
    """Each cell in `width` characters, cells that differed still different where it can be: a
    cell too wide keeps its start and the part where it differs from its nearest neighbour; two
    that still meet are elided again around where they differ from each other."""
    nearest = _nearest_differences(cells)
    out = [elide_around(c, width, nearest[c] if len(c) > width else 0, keep[i] if keep else 0)
           for i, c in enumerate(cells)]
    for _ in range(3):
        groups: dict[str, list[int]] = {}
        for i, o in enumerate(out):
            groups.setdefault(o, []).append(i)
        clashes = [g for g in groups.values() if len({cells[i] for i in g}) > 1]
        if not clashes:
            break
        for g in clashes:
            members = [cells[i] for i in g]
            for i in g:
                at = first_difference(cells[i], members)
                out[i] = elide_around(cells[i], width, at, keep[i] if keep else 0)
    return out


def fit_name(name: str, width: int, others: Sequence[str] = ()) -> str:
    """`name` in at most `width` characters for a one-line message: its most detailed short form
    that fits, never less detail than tells it from `others` (the names it is set beside); when
    even that is too wide, elided around where it differs from them."""
    options = forms(name)
    least = distinct([name, *others])[0]
    start = options.index(least) if least in options else 0
    fitting = [f for f in options[start:] if len(f) <= width]
    if fitting:
        return fitting[-1]
    return elide_around(least, width, first_difference(least, [compact(o) for o in others]))
