#!/usr/bin/env python3
"""Measure the counts issue 25 ("One model end to end") names, over hotspot/, with `ast`.

    scripts/model_counts.py                  # a text table
    scripts/model_counts.py --format json    # one JSON document
    scripts/model_counts.py --root DIR       # another checkout (DIR holds hotspot/)
    scripts/model_counts.py --mypy           # also run mypy and count its errors (~10 s)

What is counted (paths relative to the root; every .py file under hotspot/):
- get_calls: `.get(` calls (any call of an attribute named `get`) in hotspot/plan, render, sweep.
- json_types: uses of the names JsonObject / JsonValue (not their imports) outside the modules
  that hold serialization: JSON written or read as such (SERIALIZATION_MODULES, each with why,
  and any module whose name says "serializ"). `--format json` also gives the count in every module.
- any: uses of the name `Any` (not its import), anywhere.
- object_annotations: annotations (parameters, returns, annotated assignments) that mention the
  name `object`, e.g. `x: object`, `-> list[object]`.
- type_ignores: `# type: ignore` comments; type_ignores_without_reason: those without an error
  code or without a reason comment after it (`# type: ignore[code]  # why` is the form).
- string_states: comparisons (==, !=, in, not in) of a state-named value (STATE_NAMES: `x.mode`,
  `state`, ...) with a string literal or a tuple/list/set of them: states still held as strings.
  enum_states: str-enum classes (a class deriving from str and Enum, or from StrEnum/TextEnum).
- mypy_errors (with `--mypy`): the errors `python -m mypy` reports from the root, with the
  root's configuration (pyproject.toml [tool.mypy]); null without `--mypy`.
- atomic_writers: functions that call os.replace / os.rename, or `.replace(x)` / `.rename(x)` with
  one positional argument (Path.replace/rename; str.replace takes two), innermost function named.
- arch_deciders: modules that make an Arch value themselves (calls of Arch or parse_arch) outside
  the value's own module (hotspot/arch/arch.py); the one decision, hotspot/arch/decide.py, is
  counted among them. A module that only states hints (an ArchHint, a guess from counter names)
  and takes decide()'s answer does not decide.
- entry_points: public module-level functions in hotspot/att and hotspot/plan whose first
  parameter is annotated Path and that return a Result or a DispatchAnalysis (the annotation's
  outer type: a loader returning `tuple[DispatchAnalysis, warnings]` is not one), leaving out a
  step that only the use case (USE_CASE) imports: callers reach it through the use case.
- capture_imports: modules outside hotspot/capture that import a hotspot.capture module
  (imports inside functions included), and the distinct capture modules they import.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GET_PACKAGES = ("plan", "render", "sweep")
JSON_TYPE_NAMES = frozenset({"JsonObject", "JsonValue"})
SERIALIZATION_MODULES = {
    "hotspot/result.py": "the JSON envelope and plain()",
    "hotspot/decode.py": "JSON read back into the records (from_plain)",
    "hotspot/capture/files.py": "load_json/parse_json: every input JSON document is parsed here",
    "hotspot/capture/codejson.py": "code.json's document, before its rows become CodeRows",
    "hotspot/capture/layout.py": "filenames.json's document, before it becomes WaveFiles",
    "hotspot/capture/snapshots.py": "snapshots.json's tree, before it becomes a SourceMap",
    "hotspot/capture/waves.py": "a wave file's document and the decoder's raw waitcnt edges",
    "hotspot/capture/saved.py": "a saved hotspot JSON document, before hotspot/att/load.py decodes it",
    "hotspot/export/perfetto.py": "the Chrome trace-event JSON it writes",
}
ARCH_VALUE_MODULE = "hotspot/arch/arch.py"
ARCH_DECISION_CALLS = frozenset({"Arch", "parse_arch"})
ENTRY_PACKAGES = ("att", "plan")
ENTRY_RETURNS = frozenset({"Result", "DispatchAnalysis"})
USE_CASE = "hotspot/plan/entry_point.py"
CAPTURE_PACKAGE = "hotspot.capture"
# Names whose values are states: compared with a string literal they are a state kept as a string.
STATE_NAMES = frozenset({"mode", "plan", "status", "state", "kind", "matched_by"})
# str-enum bases: the standard one and hotspot/strenum.py's (a str enum shown as its value)
STR_ENUM_BASES = frozenset({"StrEnum", "TextEnum"})
# `# type: ignore[code]  # why`
IGNORE_WITH_REASON = re.compile(r"type:\s*ignore\[[\w\-, ]+\]\s*#\s*\S")
MYPY_ERROR = re.compile(r"^\S+:\d+: error:", re.M)


@dataclass
class Module:
    rel: str        # hotspot/plan/rules.py
    name: str       # hotspot.plan.rules
    tree: ast.Module
    source: str


@dataclass
class Counts:
    get_calls: dict[str, int] = field(default_factory=dict)
    json_types: int = 0
    json_types_by_module: dict[str, int] = field(default_factory=dict)
    any: int = 0
    object_annotations: int = 0
    type_ignores: int = 0
    type_ignores_without_reason: int = 0
    string_states: int = 0
    enum_states: int = 0
    mypy_errors: int | None = None
    # file names (without .py) that more than one module holds, `__init__` aside, and the paths
    shared_names: dict[str, list[str]] = field(default_factory=dict)
    # where-to-add rows (CONTRIBUTING.md): code files outside docs/ each row's recipe edits
    # (tests/test_where_to_add.py RECIPES); None when not asked for (--where-to-add)
    where_to_add_files: dict[str, int] | None = None
    # the most times a fresh `hotspot diff` opened one wave file of a side (--diff-opens); one pass
    wave_file_opens_per_side: int | None = None
    atomic_writers: list[str] = field(default_factory=list)
    arch_deciders: list[str] = field(default_factory=list)
    entry_points: list[str] = field(default_factory=list)
    capture_importers: list[str] = field(default_factory=list)
    capture_modules_imported: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "schema_version": 1,
            "get_calls": {**self.get_calls, "total": sum(self.get_calls.values())},
            "json_types_outside_serialization": self.json_types,
            "json_types_by_module": dict(sorted(self.json_types_by_module.items())),
            "any": self.any,
            "object_annotations": self.object_annotations,
            "type_ignores": self.type_ignores,
            "type_ignores_without_reason": self.type_ignores_without_reason,
            "string_states": self.string_states,
            "enum_states": self.enum_states,
            "mypy_errors": self.mypy_errors,
            "shared_module_names": {"count": len(self.shared_names), "names": self.shared_names},
            "where_to_add_files": self.where_to_add_files,
            "wave_file_opens_per_diff_side": self.wave_file_opens_per_side,
            "atomic_writers": {"count": len(self.atomic_writers), "functions": self.atomic_writers},
            "arch_deciders": {"count": len(self.arch_deciders), "modules": self.arch_deciders},
            "entry_points": {"count": len(self.entry_points), "functions": self.entry_points},
            "capture_imports": {"importers": len(self.capture_importers),
                                "capture_modules": len(self.capture_modules_imported),
                                "importer_modules": self.capture_importers,
                                "imported_modules": self.capture_modules_imported},
        }


def load_modules(root: Path) -> list[Module]:
    out = []
    for path in sorted((root / "hotspot").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        source = path.read_text(encoding="utf-8")
        out.append(Module(rel, ".".join(parts), ast.parse(source, filename=rel), source))
    return out


def _in_package(m: Module, package: str) -> bool:
    return m.rel.startswith(f"hotspot/{package}/")


def _is_serialization(m: Module) -> bool:
    return m.rel in SERIALIZATION_MODULES or "serializ" in Path(m.rel).stem


def _names(nodes: list[ast.AST]) -> Iterator[str]:
    """Every name a module uses: `X` and the last part of `a.X` (imports are not ast.Name), and the
    names inside quoted annotations."""
    for node in nodes:
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
    for ann in _annotations(nodes):
        for node in ast.walk(ann):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield from _string_annotation_names(node.value)


def _string_annotation_names(text: str) -> Iterator[str]:
    """Names in a quoted annotation ("JsonObject", "list[object]")."""
    try:
        expr = ast.parse(text, mode="eval")
    except SyntaxError:
        return
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr


def _annotations(nodes: list[ast.AST]) -> Iterator[ast.expr]:
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None and arg.annotation is not None:
                    yield arg.annotation
            if node.returns is not None:
                yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def _annotation_names(ann: ast.expr) -> set[str]:
    names = set()
    for node in ast.walk(ann):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.update(_string_annotation_names(node.value))
    return names


def _called_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _is_atomic_replace(call: ast.Call) -> bool:
    f = call.func
    if not isinstance(f, ast.Attribute) or f.attr not in ("replace", "rename"):
        return False
    if isinstance(f.value, ast.Name) and f.value.id == "os":
        return True
    if isinstance(f.value, ast.Name) and f.value.id == "dataclasses":
        return False
    return len(call.args) == 1 and not call.keywords and not isinstance(f.value, ast.Constant)


def _functions_calling(tree: ast.Module, predicate) -> list[str]:  # noqa: ANN001
    """Qualified names of the innermost functions holding a call the predicate accepts."""
    found: list[str] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call) and predicate(child):
                name = ".".join(scope) or "<module>"
                if name not in found:
                    found.append(name)
            visit(child, scope)

    visit(tree, [])
    return found


def _imported_modules(m: Module, known: set[str]) -> Iterator[str]:
    """Absolute names of the hotspot modules a module imports (a `from pkg import sub` names the
    submodule when it is one)."""
    package = m.name if m.rel.endswith("__init__.py") else m.name.rpartition(".")[0]
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[:len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield sub if sub in known else base


def _type_ignores(source: str) -> tuple[int, int]:
    """(`type: ignore` comments, those of them without an error code and a reason)."""
    if "type: ignore" not in source:
        return 0, 0
    n = bare = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and "type: ignore" in tok.string:
            n += 1
            bare += not IGNORE_WITH_REASON.search(tok.string)
    return n, bare


def _state_name(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name in STATE_NAMES


def _string_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                       for e in node.elts)
    return False


def _string_states(nodes: list[ast.AST]) -> int:
    """Comparisons of a state-named value with string literals (`x.mode == "cycles"`)."""
    n = 0
    for node in nodes:
        if not isinstance(node, ast.Compare):
            continue
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) and (
                    (_state_name(left) and _string_literal(right))
                    or (_state_name(right) and _string_literal(left) and isinstance(op, (ast.Eq, ast.NotEq)))):
                n += 1
            left = right
    return n


def _is_str_enum(node: ast.AST) -> bool:
    if not isinstance(node, ast.ClassDef):
        return False
    bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
             for b in node.bases}
    return bool(bases & STR_ENUM_BASES) or ("str" in bases and "Enum" in bases)


def mypy_errors(root: Path) -> int:
    """The errors mypy reports over the root's hotspot/ (its own config), counted."""
    p = subprocess.run([sys.executable, "-m", "mypy", "hotspot"], cwd=root, capture_output=True,
                       text=True, check=False)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"mypy failed ({p.returncode}): {(p.stderr or p.stdout).strip()[:300]}")
    return len(MYPY_ERROR.findall(p.stdout))


def measure(root: Path) -> Counts:
    modules = load_modules(root)
    known = {m.name for m in modules}
    c = Counts(get_calls={p: 0 for p in GET_PACKAGES})
    importers: list[str] = []
    imported: set[str] = set()
    for m in modules:
        nodes = list(ast.walk(m.tree))
        calls = [n for n in nodes if isinstance(n, ast.Call)]
        for p in GET_PACKAGES:
            if _in_package(m, p):
                c.get_calls[p] += sum(1 for n in calls if isinstance(n.func, ast.Attribute)
                                      and n.func.attr == "get")
        names = list(_names(nodes))
        if not _is_serialization(m):
            uses = sum(1 for n in names if n in JSON_TYPE_NAMES)
            if uses:
                c.json_types += uses
                c.json_types_by_module[m.rel] = uses
        c.any += sum(1 for n in names if n == "Any")
        c.object_annotations += sum(1 for a in _annotations(nodes) if "object" in _annotation_names(a))
        ignores, bare = _type_ignores(m.source)
        c.type_ignores += ignores
        c.type_ignores_without_reason += bare
        c.string_states += _string_states(nodes)
        c.enum_states += sum(1 for n in nodes if _is_str_enum(n))
        c.atomic_writers += [f"{m.rel}:{f}" for f in _functions_calling(m.tree, _is_atomic_replace)]
        if m.rel != ARCH_VALUE_MODULE and any(_called_name(n) in ARCH_DECISION_CALLS for n in calls):
            c.arch_deciders.append(m.rel)
        if not (m.name == CAPTURE_PACKAGE or m.name.startswith(CAPTURE_PACKAGE + ".")):
            caps = {i for i in _imported_modules(m, known)
                    if i == CAPTURE_PACKAGE or i.startswith(CAPTURE_PACKAGE + ".")}
            if caps:
                importers.append(m.rel)
                imported |= caps
    c.capture_importers = importers
    c.capture_modules_imported = sorted(imported)
    c.entry_points = _entry_points(modules)
    by_name: dict[str, list[str]] = {}
    for m in modules:
        stem = Path(m.rel).stem
        if stem != "__init__":
            by_name.setdefault(stem, []).append(m.rel)
    c.shared_names = {n: sorted(paths) for n, paths in sorted(by_name.items()) if len(paths) > 1}
    return c


def where_to_add_files(root: Path) -> dict[str, int]:
    """Code files (outside docs/) each where-to-add row's recipe edits, from the recipes
    tests/test_where_to_add.py applies and checks (that test proves each recipe works)."""
    sys.path.insert(0, str(root))
    try:
        from tests.test_where_to_add import RECIPES
    finally:
        sys.path.remove(str(root))
    out: dict[str, int] = {}
    for r in RECIPES:
        out[r.row] = max(out.get(r.row, 0), len(r.code_files()))
    return dict(sorted(out.items()))


def wave_file_opens_per_side(root: Path) -> int:
    """A fresh diff (cache off) of two copies of the bundled example, in a child process under an
    audit hook: the most times one wave file of either side was opened."""
    import shutil
    import subprocess
    import tempfile

    example = root / "hotspot" / "examples" / "data" / "example_run" / "ui_output_agent_5600_dispatch_1"
    code = (
        "import collections, json, sys\n"
        "opened = collections.Counter()\n"
        "def hook(event, args):\n"
        "    if event == 'open' and isinstance(args[0], str) and '_wv' in args[0]:\n"
        "        opened[args[0]] += 1\n"
        "sys.addaudithook(hook)\n"
        "from hotspot.cli import main\n"
        "try:\n"
        "    main(['diff', sys.argv[1], sys.argv[2], '--format', 'json', '--no-cache'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(max(opened.values()) if opened else 0), file=sys.stderr)\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        sides = [Path(tmp) / side / example.name for side in ("before", "after")]
        for side in sides:
            shutil.copytree(example, side)
        p = subprocess.run([sys.executable, "-c", code, *map(str, sides)], cwd=tmp, capture_output=True,
                           text=True, env={**os.environ, "HOTSPOT_CACHE": "off", "PYTHONPATH": str(root)})
        return int(p.stderr.strip().splitlines()[-1])


def _is_entry_point(node: ast.stmt) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("_"):
        return False
    params = [*node.args.posonlyargs, *node.args.args]
    if not params or params[0].annotation is None or node.returns is None:
        return False
    return "Path" in _annotation_names(params[0].annotation) \
        and bool(_outer_names(node.returns) & ENTRY_RETURNS)


def _outer_names(ann: ast.expr) -> set[str]:
    """The outer types an annotation names: `A | B` both, `tuple[A, B]` only tuple."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            return _outer_names(ast.parse(ann.value, mode="eval").body)
        except SyntaxError:
            return set()
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _outer_names(ann.left) | _outer_names(ann.right)
    if isinstance(ann, ast.Subscript):
        return _outer_names(ann.value)
    if isinstance(ann, ast.Name):
        return {ann.id}
    if isinstance(ann, ast.Attribute):
        return {ann.attr}
    return set()


def _entry_points(modules: list[Module]) -> list[str]:
    """The entry-point-shaped functions of att/ and plan/ that are not steps of the use case. A
    step is imported only by the use case, or only by modules holding steps (a step of a step:
    att/capture_analysis.py `analyze_full` calls pcsampling_analysis.py `analyze_samples`)."""
    candidates = [(m, f.name) for m in modules if any(_in_package(m, p) for p in ENTRY_PACKAGES)
                  for f in m.tree.body if _is_entry_point(f)]
    importers = {(m.rel, name): _importers(modules, m.name, name) - {m.rel} for m, name in candidates}
    steps: set[tuple[str, str]] = set()
    holding = {USE_CASE}
    changed = True
    while changed:
        changed = False
        for key, by in importers.items():
            if key not in steps and by and by <= holding:
                steps.add(key)
                holding.add(key[0])
                changed = True
    return [f"{rel}:{name}" for rel, name in importers if (rel, name) not in steps]


def _importers(modules: list[Module], module_name: str, name: str) -> set[str]:
    """Modules that import `name` from `module_name` (`from module_name import name`, at any depth)."""
    out = set()
    for m in modules:
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ImportFrom) and node.module == module_name \
                    and any(a.name == name for a in node.names):
                out.add(m.rel)
    return out


def render_text(c: Counts) -> str:
    gets = ", ".join(f"{p} {n}" for p, n in c.get_calls.items())
    lines = [
        f".get( calls in plan/render/sweep: {sum(c.get_calls.values())} ({gets})",
        f"JsonObject/JsonValue uses outside serialization: {c.json_types}",
        f"Any: {c.any}",
        f"object annotations: {c.object_annotations}",
        f"type: ignore: {c.type_ignores} ({c.type_ignores_without_reason} without a code and reason)",
        f"string-state comparisons: {c.string_states}; str-enum state types: {c.enum_states}",
        *([f"mypy errors: {c.mypy_errors}"] if c.mypy_errors is not None else []),
        f"file names shared by modules (__init__ aside): {len(c.shared_names)}"
        + (f" ({', '.join(c.shared_names)})" if c.shared_names else ""),
        *([f"files per where-to-add row: " + ", ".join(f"{k} {v}" for k, v in c.where_to_add_files.items())]
          if c.where_to_add_files is not None else []),
        *([f"wave-file opens per diff side: {c.wave_file_opens_per_side}"]
          if c.wave_file_opens_per_side is not None else []),
        f"atomic-write routines: {len(c.atomic_writers)}",
        *(f"  {f}" for f in c.atomic_writers),
        f"modules that decide an arch: {len(c.arch_deciders)}",
        *(f"  {m}" for m in c.arch_deciders),
        f"analysis entry points: {len(c.entry_points)}",
        *(f"  {f}" for f in c.entry_points),
        f"modules outside capture/ importing capture: {len(c.capture_importers)} "
        f"(importing {len(c.capture_modules_imported)} capture modules)",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout holding hotspot/ (default: this one)")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    ap.add_argument("--mypy", action="store_true", help="also run mypy over the root and count its errors")
    ap.add_argument("--where-to-add", action="store_true",
                    help="also count the code files of each where-to-add row's recipe (tests/test_where_to_add.py)")
    ap.add_argument("--diff-opens", action="store_true",
                    help="also run a fresh diff of two copies of the bundled example and count wave-file opens")
    args = ap.parse_args(argv)
    if not (args.root / "hotspot").is_dir():
        print(f"model_counts: {args.root} holds no hotspot/ package; pass --root DIR", file=sys.stderr)
        return 2
    counts = measure(args.root)
    if args.mypy:
        counts.mypy_errors = mypy_errors(args.root)
    if args.where_to_add:
        counts.where_to_add_files = where_to_add_files(args.root)
    if args.diff_opens:
        counts.wave_file_opens_per_side = wave_file_opens_per_side(args.root)
    sys.stdout.write(json.dumps(counts.as_json(), indent=2) + "\n" if args.format == "json"
                     else render_text(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
