"""Answers sized for an assistant's context window: a tool's answer is at most `max_bytes` (default
16 KB) of JSON; the lists of a larger document are cut and paged with a cursor.

Which lists page: every list reached from the envelope through objects only (`data.kernels`,
`data.plan.items`, `data.rows`; a list inside a list's item travels with its item). While the
document is over the cap, the list whose JSON is largest loses items from its end. The answer then
carries `page.more`: for each cut list its path, how many items this answer holds, the total, and a
cursor. The same call with `cursor` returns the next items of that one list (as many as fit) and,
while items remain, the cursor after them: the first answer's items and the pages together are
the list, each item exactly once, in order.

A cursor is opaque to the caller: it holds the list's path, the offset, the list's length and a
digest of the call's command line, so a cursor given to another call, or a list that changed length
since (a sweep still running), is refused with what to do instead.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from hotspot.errors import UsageError
from hotspot.mcp.lru import Lru
from hotspot.result import dumps

CAP_BYTES = 16 * 1024          # the default size of an answer: a few fit in an assistant's context
MIN_BYTES = 2 * 1024           # below this even a brief answer's verdict would be cut
MAX_BYTES = 1 << 20            # what a caller may ask for at most (an answer is one text block)
CURSOR_ARG = "cursor"
MAX_BYTES_ARG = "max_bytes"
_VERSION = 1                   # of the cursor's layout

Key = str | int
Path = tuple[Key, ...]     # object keys and, inside a paged item, list positions


def schema_properties() -> dict[str, dict[str, Any]]:
    """The paging arguments every tool takes (hotspot/mcp/tool_schemas.py adds them to each schema)."""
    return {
        CURSOR_ARG: {"type": "string",
                     "description": "From page.more[].cursor of an earlier answer of this same call: "
                                    "the next items of that list (repeat every other argument as "
                                    "it was)."},
        MAX_BYTES_ARG: {"type": "integer", "default": CAP_BYTES, "minimum": MIN_BYTES,
                        "maximum": MAX_BYTES,
                        "description": "The largest answer, in bytes of JSON; longer lists are cut "
                                       "and paged (page.more says how to get the rest)."},
    }


def call_digest(argv: list[str]) -> str:
    """The call a cursor belongs to: its command line (paging arguments are not part of it)."""
    return hashlib.sha256("\0".join(argv).encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class Cursor:
    call: str
    path: Path
    offset: int
    total: int

    def encode(self) -> str:
        raw = orjson.dumps({"v": _VERSION, "c": self.call, "p": list(self.path), "o": self.offset,
                            "n": self.total})
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str, tool: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            d = orjson.loads(raw)
            if d.get("v") != _VERSION:
                raise ValueError("version")
            cur = cls(str(d["c"]), tuple(k if isinstance(k, int) else str(k) for k in d["p"]), int(d["o"]),
                      int(d["n"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise UsageError(f"cursor {text[:40]!r} is not one this server gave",
                             f"pass a cursor from page.more of an earlier {tool} answer, or call "
                             f"{tool} without cursor") from None
        return cur


def limit_of(arguments: dict[str, Any], tool: str) -> int:
    value = arguments.get(MAX_BYTES_ARG)
    if value is None:
        return CAP_BYTES
    if not isinstance(value, int) or isinstance(value, bool) or not MIN_BYTES <= value <= MAX_BYTES:
        raise UsageError(f"argument 'max_bytes' is {value!r}: expected an integer from {MIN_BYTES} "
                         f"to {MAX_BYTES}", f"call {tool} without max_bytes for {CAP_BYTES} bytes")
    return value


def _size(obj: Any) -> int:
    return len(dumps(obj, pretty=False))


def _lists(node: Any, path: Path = ()) -> list[tuple[Path, list[Any]]]:
    """Every non-empty list reached from `node` through objects only, with its path."""
    out: list[tuple[Path, list[Any]]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, list):
                if value:
                    out.append(((*path, str(key)), value))
            elif isinstance(value, dict):
                out += _lists(value, (*path, str(key)))
    return out


def _at(doc: Any, path: Path) -> Any:
    node = doc
    for key in path:
        if isinstance(key, int) and isinstance(node, list) and 0 <= key < len(node):
            node = node[key]
        elif isinstance(key, str) and isinstance(node, dict) and key in node:
            node = node[key]
        else:
            return None
    return node


def _set(doc: Any, path: Path, value: Any) -> None:
    _at(doc, path[:-1])[path[-1]] = value


def _shown(path: Path) -> str:
    return ".".join(str(k) for k in path)


def _hint(tool: str, limit: int) -> str:
    return (f"lists were cut to fit {limit} bytes: for the rest of a list call {tool} again with the "
            "same arguments and that list's cursor (from page.more), or a larger max_bytes")


def _cut(doc: dict[str, Any], root: Path, limit: int, call: str,
         origin: Callable[[Path], Path]) -> None:
    """Cut the lists reached from `doc` at `root` (through objects), the largest first, from their
    ends, until `doc` fits in `limit`; doc["page"]["more"] gains an entry (a cursor into the whole
    document, at `origin(path)`) for each list cut."""
    page = doc["page"]
    kept = list(page["more"])
    totals: dict[Path, int] = {}
    while True:
        page["more"] = kept + [
            {"list": _shown(origin(p)), "returned": len(_at(doc, p)), "total": total,
             "cursor": Cursor(call, origin(p), len(_at(doc, p)), total).encode()}
            for p, total in totals.items()]
        size = _size(doc)
        if size <= limit:
            return
        candidates = [((*root, *p), v) for p, v in _lists(_at(doc, root)) if root or p[0] != "page"]
        if not candidates:
            return  # nothing left to cut: the answer is what remains (an object over the cap)
        path, items = max(candidates, key=lambda pv: _size(pv[1]))
        totals.setdefault(path, len(items))
        excess = size - limit + 250  # room for this list's page.more entry (its cursor)
        keep = len(items)
        while keep > 0 and excess > 0:
            keep -= 1
            excess -= _size(items[keep]) + 1
        _set(doc, path, items[:keep])


def first_page(document: bytes, tool: str, call: str, limit: int) -> bytes:
    """The answer of a call without cursor: the document itself when it fits, else the document
    with its largest lists cut to fit and `page` saying how to get the rest."""
    if len(document) <= limit:
        return document
    doc = orjson.loads(document)
    if not isinstance(doc, dict) or isinstance(doc.get("error"), dict):
        return document  # an error envelope is a few hundred bytes; never cut what says what failed
    doc["page"] = {"max_bytes": limit, "more": [], "hint": _hint(tool, limit)}
    _cut(doc, (), limit, call, lambda p: p)
    if not doc["page"]["more"]:
        doc.pop("page")
    return dumps(doc, pretty=False)


def next_page(document: bytes, tool: str, call: str, cursor_text: str, limit: int) -> bytes:
    """The answer of a call with `cursor`: the next items of the list it names, as many as fit
    (at least one; the lists inside one item too large alone are cut and paged in turn), with the
    cursor after them while items remain."""
    cur = Cursor.decode(cursor_text, tool)
    if cur.call != call:
        raise UsageError("this cursor belongs to another call (its other arguments differ)",
                         f"repeat the {tool} call that gave the cursor, with every argument as it "
                         "was, plus cursor")
    doc = orjson.loads(document)
    if not isinstance(doc, dict) or isinstance(doc.get("error"), dict):
        return document
    items = _at(doc, cur.path)
    if not isinstance(items, list) or len(items) != cur.total or not 0 <= cur.offset < len(items):
        raise UsageError(f"the list {_shown(cur.path)} changed since this cursor was given",
                         f"call {tool} again without cursor and page from its new answer")
    taken: list[Any] = []
    page: dict[str, Any] = {"schema_version": doc.get("schema_version"), "command": doc.get("command"),
                            "ok": doc.get("ok", True),  # a later page says what the first said
                            "data": {"list": _shown(cur.path), "offset": cur.offset, "total": cur.total,
                                     "items": taken},
                            "warnings": doc.get("warnings", []),
                            "page": {"max_bytes": limit, "more": [], "hint": _hint(tool, limit)}}
    size = _size(page) + 250  # the continuation's page.more entry
    for item in items[cur.offset:]:
        cost = _size(item) + 1
        if taken and size + cost > limit:
            break
        taken.append(item)
        size += cost
    end = cur.offset + len(taken)
    if end < cur.total:
        page["page"]["more"].append({"list": _shown(cur.path), "returned": len(taken), "total": cur.total,
                                     "cursor": Cursor(call, cur.path, end, cur.total).encode()})
    if len(taken) == 1 and _size(page) > limit:  # one item over the cap alone: page its lists
        _cut(page, ("data", "items", 0), limit, call, lambda p: (*cur.path, cur.offset, *p[3:]))
    if not page["page"]["more"]:
        page["page"]["hint"] = "this was the last page of the list"
    return dumps(page, pretty=False)


class Held(Lru[str, bytes]):
    """The whole documents of the calls whose answers were cut, by call digest (least recently
    used dropped beyond `limit_bytes`): a cursor pages the very document its first answer came
    from, so a tool that runs anew on every call (sweep_status, collect) is not run again, and a
    list that changes meanwhile does not shift items between pages."""

    def __init__(self, limit_bytes: int = 64 << 20) -> None:
        super().__init__(limit_bytes, len)
