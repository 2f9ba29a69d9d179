"""The layer order of docs/architecture.md holds for every import in hotspot/ (function-level ones
included), there are no import cycles, and only the modules listed below open files."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hotspot"
DOC = ROOT / "docs" / "architecture.md"

# Modules that may open files, and why. Everything else reads through hotspot/capture.
MAY_OPEN = {
    "hotspot.capture": "the capture layer: every capture file is read here",
    "hotspot.pmc.read_csv": "counter CSV reader",
    "hotspot.pmc.read_rocpd": "counter rocpd reader",
    "hotspot.pmc.read_side": "sysinfo/roofline/agent_info beside counter files",
    "hotspot.pmc.discover": "lists the counter files the user named",
    "hotspot.collect": "writes run directories, reads its own logs and rocprofv3 outputs it made",
    "hotspot.sweep": "the sweep manifest, lock and logs",
    "hotspot.outfile": "the one writer of stdout and of every output file (atomic, never a special file)",
    "hotspot.skill.install": "copies the skill where the user asked (writes through hotspot.outfile)",
    "hotspot.synth": "writes synthetic captures",
    "hotspot.examples": "locates the bundled example",
    "hotspot.commands._run": "points a closed stdout at /dev/null",
    "hotspot.cache.store": "the result cache's own entries in the user cache dir",
    "hotspot.cache.deps": "lists searched folders to record what a cached result depends on",
    "hotspot.cache.output": "reads back the page or trace a command wrote, to replay it",
    "hotspot.launch": "points a closed stdout at /dev/null after replaying a cached output",
    "hotspot.clihelp": "points a closed stdout at /dev/null after a help page met a broken pipe",
}
OPEN_CALLS = re.compile(r"(\bopen|\bos\.open|\bsqlite3\.connect|\.read_bytes|\.read_text|\.write_bytes|"
                        r"\.write_text|\bos\.scandir|\bos\.listdir|\.iterdir|\.rglob|\.glob)\(")


def _layers() -> list[list[str]]:
    text = DOC.read_text()
    block = text.split("<!-- layers -->")[1].split("<!-- /layers -->")[0]
    rows = [line.split("|") for line in block.strip().splitlines()[2:]]
    return [[p.strip() for p in row[2].split(",")] for row in rows]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of import nodes inside `if TYPE_CHECKING:` blocks (annotations only, no runtime edge)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for b in node.body for n in ast.walk(b))
    return out


def _imports(path: Path, name: str, runtime_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    skip = _type_checking_nodes(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("hotspot"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith("hotspot"):
                out.add(mod)
                out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def _layer_of(module: str, layers: list[list[str]]) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for i, pkgs in enumerate(layers):
        for p in pkgs:
            if module == p or module.startswith(p + ".") and p != "hotspot":
                if best is None or len(p) > len(best[1]):
                    best = (i, p)
    if best is None and module.split(".")[0] == "hotspot" and module.count(".") == 0:
        return (0, "hotspot")
    return best


def test_every_module_has_a_layer() -> None:
    layers = _layers()
    missing = [m for m in _modules() if _layer_of(m, layers) is None]
    assert not missing, f"add these to the layer table of docs/architecture.md: {missing}"


def test_no_upward_imports() -> None:
    layers = _layers()
    modules = _modules()
    bad = []
    for name, path in sorted(modules.items()):
        mine = _layer_of(name, layers)
        for imp in sorted(_imports(path, name)):
            if imp not in modules and imp.rsplit(".", 1)[0] not in modules:
                continue
            target = imp if imp in modules else imp.rsplit(".", 1)[0]
            theirs = _layer_of(target, layers)
            if mine is None or theirs is None:
                continue
            same_pkg = theirs[1] == mine[1]
            if theirs[0] > mine[0] or (theirs[0] == mine[0] and not same_pkg and theirs[0] != 0):
                bad.append(f"{name} (layer {mine[0]}) imports {target} (layer {theirs[0]})")
    assert not bad, "\n".join(bad)


def test_no_import_cycles() -> None:
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for imp in _imports(path, name, runtime_only=True):
            target = imp if imp in modules else imp.rsplit(".", 1)[0]
            if target in modules and target != name and not name.startswith(target + "."):
                graph[name].add(target)
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(modules):
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_only_listed_modules_open_files() -> None:
    offenders = []
    for name, path in sorted(_modules().items()):
        if any(name == m or name.startswith(m + ".") for m in MAY_OPEN):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if OPEN_CALLS.search(code) and not code.strip().startswith(("def ", '"', "'")):
                offenders.append(f"{name}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
