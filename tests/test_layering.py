"""The layer order of docs/architecture.md holds for every import in hotspot/ (function-level ones
included), there are no import cycles, only the modules listed below open files, outside
hotspot/capture only its public surface is imported, and, checked on the calls a command makes,
only hotspot/capture opens an input file."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hotspot"
DOC = ROOT / "docs" / "architecture.md"

# Modules that may open files, and why. Everything else reads through hotspot/capture.
MAY_OPEN = {
    "hotspot.capture": "the capture layer: every input file (captures, side files, kernel traces, "
                       "counter files, saved JSON) is read here",
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
    "hotspot.console": "points a closed stdout at /dev/null after replaying a cached output",
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
    """No two modules import each other, directly or around a circle: imports inside functions and
    annotation-only ones (`if TYPE_CHECKING:`) count, as they tie the modules as much."""
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for imp in _imports(path, name):
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



def _shared_names() -> set[str]:
    """The module names docs/architecture.md lists as one role per package ("Module names")."""
    block = DOC.read_text().split("<!-- shared names -->")[1].split("<!-- /shared names -->")[0]
    return {m for row in block.strip().splitlines()[2:] for m in re.findall(r"`(\w+)\.py`", row.split("|")[1])}


def test_no_two_modules_share_a_name() -> None:
    """A module's file name says what it holds: two modules share one only when it is a role listed
    in docs/architecture.md (each package's `api`, ...), or both are in hotspot/commands/ and
    hotspot/render/, named after the command they serve."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py" and "examples" not in path.relative_to(PACKAGE).parts[:1]:
            by_name[path.name].append(str(path.relative_to(ROOT)))
    roles = _shared_names()
    command_views = {"hotspot/commands", "hotspot/render"}
    shared = {name: sorted(paths) for name, paths in by_name.items()
              if len(paths) > 1 and name[:-3] not in roles
              and not {p.rsplit("/", 1)[0] for p in paths} <= command_views}
    assert not shared, shared


def test_no_package_is_split_across_layers() -> None:
    """Every module of a package sits in its package's layer: a module listed on its own in another
    layer than its package is an arrow running back up between the two packages."""
    layers = _layers()
    where = {p: i for i, pkgs in enumerate(layers) for p in pkgs}
    split = [f"{p} (layer {i}) is in {pkg} (layer {where[pkg]})" for p, i in where.items()
             for pkg in [p.rsplit(".", 1)[0]] if pkg in where and pkg != "hotspot" and where[pkg] != i]
    assert not split, split

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


# --- one reader surface ------------------------------------------------------------------------


def _capture_imports(path: Path, name: str) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import of hotspot.capture or below in one module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names
                    if a.name == "hotspot.capture" or a.name.startswith("hotspot.capture.")]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module == "hotspot.capture" or node.module.startswith("hotspot.capture.")):
            out.append((node.lineno, node.module, [a.name for a in node.names]))
    return out


def test_outside_capture_only_its_public_surface_is_imported() -> None:
    from hotspot.capture import _PUBLIC

    bad = []
    for name, path in sorted(_modules().items()):
        if name == "hotspot.capture" or name.startswith("hotspot.capture."):
            continue
        for line, module, names in _capture_imports(path, name):
            if module != "hotspot.capture":
                bad.append(f"{name}:{line}: imports {module} (import from hotspot.capture instead)")
            bad += [f"{name}:{line}: hotspot.capture.{n} is not public (capture/__init__.py _PUBLIC)"
                    for n in names if n not in _PUBLIC]
    assert not bad, "\n".join(bad)


def test_capture_public_names_resolve() -> None:
    """Every public name is defined where the table says (a stale entry fails here, not in use)."""
    import importlib

    from hotspot.capture import _PUBLIC

    missing = [f"{n} (hotspot.capture.{m})" for n, m in sorted(_PUBLIC.items())
               if not hasattr(importlib.import_module(f"hotspot.capture.{m}"), n)]
    assert not missing, missing
    assert not [n for n in _PUBLIC if (PACKAGE / "capture" / f"{n}.py").exists()], \
        "a public name shadows a capture module"


# Run in a child interpreter: an audit hook cannot be removed, so it must not outlive the check.
# The child runs the read-only commands in-process over the bundled example and corpus captures
# and records every file opened below an input folder (open, os.open, sqlite3.connect) with the
# module that opened it: the innermost hotspot frame, not counting capture/files.py (the opening
# primitives a capture reader calls). `violate` makes diff read its saved JSON through a function
# that opens the file itself, as diff/api.py did before it read through hotspot.capture.
_OPENS_PROBE = r"""
import os, sys, urllib.parse
from pathlib import Path

tests, out, violate = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "1"
roots = [os.path.abspath(r) + os.sep for r in sys.argv[4:]]
sys.path.insert(0, tests)
from conftest import run_cli  # noqa: E402
import hotspot  # noqa: E402

pkg = os.path.dirname(os.path.abspath(hotspot.__file__)) + os.sep
primitives = pkg + os.path.join("capture", "files.py")
example = os.path.join(pkg, "examples", "data", "example_run")
corpus = sys.argv[5]
att = os.path.join(corpus, "att", "gfx942", "ck_bmm", "ui_output_agent_5600_dispatch_2")
inputs = sys.argv[4]
saved = os.path.join(inputs, "saved.json")
run = run_cli("analyze", example, "--format", "json", "--topk", "0")
assert run.exit_code == 0, run.stderr
Path(saved).write_text(run.stdout)  # before the hook: the test's own write is no read

opened = []


def hook(event, args):
    if event not in ("open", "sqlite3.connect") or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    where = os.fsdecode(args[0])
    if where.startswith("file:"):  # a sqlite URI (capture/trace/_sqlite.py opens read-only)
        where = urllib.parse.unquote(where[5:].split("?", 1)[0])
    where = os.path.abspath(where)
    if not any(where.startswith(r) for r in roots):
        return
    f = sys._getframe(1)
    while f is not None and not (f.f_code.co_filename.startswith(pkg)
                                 and f.f_code.co_filename != primitives):
        f = f.f_back
    module = f.f_code.co_filename[len(pkg):] if f is not None else "<no hotspot frame>"
    opened.append(f"{module}	{where}")


if violate:
    import orjson
    import hotspot.capture

    hotspot.capture.read_saved_json = lambda path: orjson.loads(Path(path).read_bytes())

sys.addaudithook(hook)
tmp = os.path.join(out.parent, "outputs")
os.makedirs(tmp, exist_ok=True)
commands = [
    ("analyze", example, "--format", "json", "--jobs", "1"),
    ("plan", example, "--format", "json"),
    ("analyze", att, "--format", "text", "--jobs", "1", "--detail"),
    ("report", example, "-o", os.path.join(tmp, "r.html")),
    ("report", saved, "-o", os.path.join(tmp, "s.html")),
    ("export", "perfetto", att, "-o", os.path.join(tmp, "t.json")),
    ("diff", example, example, "--format", "json"),
    ("diff", saved, saved, "--format", "json"),
    ("kernels", os.path.join(corpus, "csv", "kernel_trace.csv"), "--format", "json"),
    ("kernels", os.path.join(corpus, "csv"), "--format", "json"),
    ("pmc", os.path.join(corpus, "pmc", "rocprof-compute_MI300X_vcopy_rocpd"), "--format", "json"),
    ("pmc", os.path.join(corpus, "csv", "counter_collection.csv"), "--format", "json"),
]
codes = []
for args in commands:
    codes.append(f"{run_cli(*args).exit_code}	{' '.join(args[:2])}")
out.write_text("\n".join(codes) + "\n--\n" + "\n".join(opened) + "\n")
"""


def _opens(tmp_path: Path, violate: bool) -> tuple[list[str], list[tuple[str, str]]]:
    corpus = (ROOT / ".." / "shared" / "corpus").resolve()
    if not corpus.is_dir():
        pytest.skip(f"real-data corpus not found at {corpus}")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    out = tmp_path / "opens.txt"
    example = PACKAGE / "examples" / "data" / "example_run"
    env = {**os.environ, "HOTSPOT_CACHE": "off"}
    run = subprocess.run([sys.executable, "-c", _OPENS_PROBE, str(ROOT / "tests"), str(out),
                          "1" if violate else "0", str(inputs), str(corpus), str(example)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    codes, opens = out.read_text().split("\n--\n")
    return codes.splitlines(), [tuple(line.split("\t")) for line in opens.splitlines() if line]


def test_only_capture_opens_input_files(tmp_path: Path) -> None:
    codes, opens = _opens(tmp_path, violate=False)
    # every command read its input (the corpus's counter_collection.csv holds only SQ_WAVES: pmc
    # reads it whole and exits 9, unusable counters)
    assert all(c.startswith(("0\t", "9\tpmc ")) for c in codes), codes
    outside = sorted({f"{module} opened {path}" for module, path in opens
                      if not module.startswith("capture" + os.sep)})
    assert not outside, "\n".join(outside)
    # the check saw the reads it is about: code.json, wave files, a side db, saved JSON, counters
    seen = " ".join(path for _, path in opens)
    for needle in ("code.json", "_wv0.json", "occupancy.json", "agent_info.csv", "results.db",
                   "saved.json", "kernel_trace.csv", "counter_collection.csv", "pmc_perf.csv"):
        assert needle in seen, needle


def test_the_open_check_catches_a_reader_outside_capture(tmp_path: Path) -> None:
    """diff and report reading their saved JSON themselves (not through hotspot.capture) is named,
    with the file: att/load.py reads it for both."""
    _codes, opens = _opens(tmp_path, violate=True)
    outside = {(module, Path(path).name) for module, path in opens
               if not module.startswith("capture" + os.sep)}
    assert (os.path.join("att", "load.py"), "saved.json") in outside, outside


def test_the_capture_facade_shows_the_checker_exactly_its_public_names() -> None:
    """hotspot/capture/__init__.py imports its names on first use; under TYPE_CHECKING it imports
    the same names from the same modules, re-exported, so mypy sees what the facade gives."""
    import importlib

    import hotspot.capture as facade

    tree = ast.parse((ROOT / "hotspot" / "capture" / "__init__.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    seen: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hotspot.capture.")
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"
            seen[alias.name] = node.module.removeprefix("hotspot.capture.")
    assert set(seen) == set(facade._PUBLIC)
    for name, module in seen.items():  # the module the checker reads defines (or holds) the runtime value
        assert getattr(importlib.import_module(f"hotspot.capture.{module}"), name) is getattr(facade, name)
