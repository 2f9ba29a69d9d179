"""Docstrings, comments and docs that point at a function name it where it lives: `hotspot/x/y.py
`name`` (or `x/y.py `name``). Each such name must be defined in that file, so a moved or renamed
function cannot leave a pointer at nothing behind."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# a path to a .py file, then (after `)`, `:` or `,` at most) a `name` or `name(...)` in backticks
POINTER = re.compile(r"((?:hotspot/)?[\w/]+\.py)\)?[ ,:]*`([A-Za-z_]\w*)(?:\([^`]*\))?`")
SOURCES = ("hotspot", "docs", "scripts")
TOP_FILES = ("README.md", "CONTRIBUTING.md")


@cache
def _defined(path: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return frozenset(names)


def _target(rel: str, where: Path) -> Path | None:
    """The file a path in `where` names: from the root, from hotspot/, beside `where`, or the one
    file of hotspot/ with that ending."""
    for cand in (ROOT / rel, ROOT / "hotspot" / rel, where.parent / rel):
        if cand.is_file():
            return cand
    found = [p for p in (ROOT / "hotspot").rglob(Path(rel).name) if str(p).endswith("/" + rel)]
    return found[0] if len(found) == 1 else None


def _texts() -> list[Path]:
    files = [ROOT / f for f in TOP_FILES if (ROOT / f).is_file()]
    for top in SOURCES:
        files += sorted(p for p in (ROOT / top).rglob("*") if p.suffix in (".py", ".md")
                        and "examples" not in p.relative_to(ROOT).parts and p.name != "pages.py")
    return files


def test_every_pointer_names_something_defined_there() -> None:
    stale = []
    for path in _texts():
        text = path.read_text()
        for m in POINTER.finditer(text):
            target = _target(m.group(1), path)
            if target is not None and m.group(2) not in _defined(target):
                line = text.count("\n", 0, m.start()) + 1
                stale.append(f"{path.relative_to(ROOT)}:{line}: {m.group(1)} `{m.group(2)}` is not "
                             f"defined in {target.relative_to(ROOT)}")
    assert not stale, "\n".join(stale)


def test_a_stale_pointer_is_found(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("see hotspot/att/load.py `read_analysis` and hotspot/att/load.py `load_bytes`\n")
    found = [(m.group(1), m.group(2)) for m in POINTER.finditer(doc.read_text())]
    assert found == [("hotspot/att/load.py", "read_analysis"), ("hotspot/att/load.py", "load_bytes")]
    target = _target(found[0][0], doc)
    assert target is not None and "read_analysis" in _defined(target) and "load_bytes" not in _defined(target)
