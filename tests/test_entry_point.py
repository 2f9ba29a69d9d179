"""One analysis entry point: every caller asks hotspot/plan/entry_point.py `analyze(target, options)`;
the ATT layer's own steps are called from nowhere else."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the ATT analysis' steps, and the modules allowed to call each
STEPS = {"analyze_full": {"hotspot/plan/entry_point.py"},
         "analyze_capture": {"hotspot/att/capture_analysis.py"},
         "with_plan": {"hotspot/plan/entry_point.py"},
         "plan_document": {"hotspot/plan/entry_point.py"}}


def _imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


def test_only_the_use_case_runs_the_analysis_steps():
    files = [*(ROOT / "hotspot").rglob("*.py"), *(ROOT / "scripts").rglob("*.py"), *(ROOT / "tests").glob("*.py")]
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        if rel == "tests/test_entry_point.py":
            continue
        used = _imported_names(path)
        for step, allowed in STEPS.items():
            if step in used:
                assert rel in allowed, f"{rel} runs {step}: call hotspot.plan.entry_point.analyze instead"


def test_the_use_cases_callers():
    callers = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "hotspot").rglob("*.py")
                     if "hotspot.plan.entry_point import analyze" in p.read_text())
    assert callers == ["hotspot/api.py", "hotspot/collect/api.py", "hotspot/commands/analyze.py", "hotspot/commands/plan.py",
                       "hotspot/diff/api.py", "hotspot/export/report_data.py", "hotspot/sweep/job.py"]
    # no other path-to-analysis function left beside it
    import hotspot.att.capture_analysis as att
    import hotspot.plan.api as plan

    for module in (att, plan):
        public = {n for n in vars(module) if n.startswith("analyze") and callable(getattr(module, n))
                  and getattr(getattr(module, n), "__module__", "") == module.__name__}
        assert public <= {"analyze_full", "analyze_capture"}, public
