"""scripts/model_counts.py on a small synthetic tree whose counts are known by construction."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "model_counts.py"

TREE = {
    "hotspot/__init__.py": "",
    # serialization: its JsonObject/JsonValue uses are not counted
    "hotspot/result.py": """
        JsonValue = object
        JsonObject = dict
        def to_json(x: JsonObject) -> JsonValue:
            return x
        class Result:
            pass
    """,
    "hotspot/plan/__init__.py": "",
    "hotspot/plan/rules.py": """
        from typing import Any
        import hotspot.capture.layout
        from hotspot.capture import files
        from hotspot.capture.trace.kernel_trace import read
        from hotspot.result import JsonObject, JsonValue

        NOTE = "# type: ignore inside a string is no comment"

        def rule(d: JsonObject, o: object) -> list[object]:
            a = d.get("x")
            b = {}.get("y", 1)
            text = "a".replace("a", "b")
            return [a, b, text]  # type: ignore[list-item]

        def g(x: "JsonValue") -> Any:
            import os
            os.replace("a.tmp", "a")
            return x.get
    """,
    "hotspot/render/__init__.py": "",
    "hotspot/render/view.py": """
        from enum import Enum
        from pathlib import Path

        class Mode(str, Enum):  # an enum-typed state
            CYCLES = "cycles"

        class Plain(Enum):  # not a str enum
            A = 1

        def v(r):
            return r.get("a") or r.get("b")

        def states(r, state, other):
            # string states: 3 (== on an attribute, `in` a tuple, a literal on the left)
            if r.mode == "cycles" or state in ("a", "b") or "x" != r.kind:
                return r.mode == Mode.CYCLES or other == "y"  # neither is a state-named string
            return r.plan.get("k")  # type: ignore[union-attr]  # a reason

        class Writer:
            def save(self, p: str, q: str) -> None:
                Path(p).replace(q)
    """,
    "hotspot/sweep/__init__.py": "",
    "hotspot/sweep/rules.py": "",  # a file name plan/ holds too
    "hotspot/other.py": """
        def f(x):
            return x.get("not in plan, render or sweep")
    """,
    "hotspot/capture/__init__.py": "",
    "hotspot/capture/files.py": "",
    "hotspot/capture/layout.py": "from hotspot.capture import files\n",
    "hotspot/capture/trace/__init__.py": "",
    "hotspot/capture/trace/kernel_trace.py": "from hotspot.capture.files import x\ndef read(): pass\n",
    "hotspot/att/__init__.py": "",
    "hotspot/att/capture_analysis.py": """
        from pathlib import Path
        from hotspot.arch.arch import Arch
        from hotspot.result import Result

        def analyze_path(path: Path, opts=None) -> Result:
            return Result()

        def analyze_dispatch_dir(d: Path) -> "DispatchAnalysis":
            return None

        def _private(path: Path) -> Result:
            return Result()

        def helper(n: int) -> Result:
            return Result()

        def arch_of(p):
            return Arch("gfx942")

        def analyze_steps(path: Path) -> Result:  # only the use case imports it: a step, not an entry
            return Result()

        def read_saved(path: Path) -> tuple["DispatchAnalysis", list[str]]:  # a loader
            return None, []
    """,
    "hotspot/plan/entry_point.py": """
        from hotspot.att.capture_analysis import analyze_steps
        from hotspot.arch.decide import ArchHint, decide  # hints handed to decide: no decision here
    """,
    "hotspot/att/sub/__init__.py": "",
    "hotspot/att/sub/x.py": "from ...capture import layout\n",
    "hotspot/arch/__init__.py": "",
    "hotspot/arch/arch.py": """
        class Arch:
            def __init__(self, name):
                self.name = name
        def parse_arch(text):
            return Arch(text)
    """,
    "hotspot/arch/decide.py": """
        from hotspot.arch.arch import parse_arch
        def decide(hints):
            return parse_arch(hints[0])
    """,
}


def _tree(root: Path) -> Path:
    for rel, text in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).lstrip("\n"))
    return root


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_counts_of_a_known_tree(tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    p = _run("--root", str(root), "--format", "json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["get_calls"] == {"plan": 2, "render": 3, "sweep": 0, "total": 5}
    assert d["json_types_outside_serialization"] == 2  # JsonObject and the quoted "JsonValue"
    assert d["json_types_by_module"] == {"hotspot/plan/rules.py": 2}
    assert d["any"] == 1
    assert d["object_annotations"] == 2
    assert d["type_ignores"] == 2
    assert d["type_ignores_without_reason"] == 1  # rules.py's has a code, no reason
    assert d["string_states"] == 3
    assert d["enum_states"] == 1
    assert d["mypy_errors"] is None  # not asked for
    assert d["shared_module_names"] == {"count": 1, "names": {"rules": ["hotspot/plan/rules.py",
                                                                          "hotspot/sweep/rules.py"]}}
    assert d["where_to_add_files"] is None and d["wave_file_opens_per_diff_side"] is None  # not asked for
    assert d["atomic_writers"] == {"count": 2, "functions": ["hotspot/plan/rules.py:g",
                                                             "hotspot/render/view.py:Writer.save"]}
    assert d["arch_deciders"] == {"count": 2, "modules": ["hotspot/arch/decide.py", "hotspot/att/capture_analysis.py"]}
    assert d["entry_points"] == {"count": 2, "functions": ["hotspot/att/capture_analysis.py:analyze_path",
                                                           "hotspot/att/capture_analysis.py:analyze_dispatch_dir"]}
    assert d["capture_imports"] == {
        "importers": 2, "capture_modules": 3,
        "importer_modules": ["hotspot/att/sub/x.py", "hotspot/plan/rules.py"],
        "imported_modules": ["hotspot.capture.files", "hotspot.capture.layout",
                             "hotspot.capture.trace.kernel_trace"]}


def test_text_format_and_a_root_without_the_package(tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    p = _run("--root", str(root))
    assert p.returncode == 0, p.stderr
    assert ".get( calls in plan/render/sweep: 5 (plan 2, render 3, sweep 0)" in p.stdout
    assert "type: ignore: 2 (1 without a code and reason)" in p.stdout
    assert "string-state comparisons: 3; str-enum state types: 1" in p.stdout
    assert "modules outside capture/ importing capture: 2 (importing 3 capture modules)" in p.stdout
    bad = _run("--root", str(tmp_path / "nowhere"))
    assert bad.returncode == 2 and "holds no hotspot/ package" in bad.stderr and not bad.stdout


def test_mypy_errors_counted(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    root = tmp_path / "proj"
    (root / "hotspot").mkdir(parents=True)
    (root / "hotspot" / "__init__.py").write_text("")
    # two errors by construction: an int given a str, a str given an int
    (root / "hotspot" / "bad.py").write_text('a: int = "one"\nb: str = 2\nc: int = 3\n')
    p = _run("--root", str(root), "--format", "json", "--mypy")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["mypy_errors"] == 2
    (root / "hotspot" / "bad.py").write_text("a: int = 1\n")
    p = _run("--root", str(root), "--mypy")
    assert p.returncode == 0, p.stderr
    assert "mypy errors: 0" in p.stdout


def test_this_tree_has_no_type_ignore_without_a_reason_and_one_pass_per_diff_side() -> None:
    """Issue 35's counts on the project itself: every `type: ignore` names its code and says why;
    a fresh diff opens each wave file of a side once."""
    p = _run("--format", "json", "--diff-opens")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["type_ignores_without_reason"] == 0
    assert d["wave_file_opens_per_diff_side"] == 1
