"""scripts/golden.py --compare --itemize: every difference between two records grouped by command,
format and where, over two tiny synthetic records written here (no hotspot run)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _golden():
    spec = importlib.util.spec_from_file_location("golden_script", ROOT / "scripts" / "golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


golden = _golden()

TEXT_A = "Kernel k\n\nStall by category\n-----------------\nlds  40%\nvalu 60%\n\nFindings\n--------\n- none\n"
HTML_A = ("<html><head><style>p{}</style></head><body><h2>Summary <span>(k)</span></h2><p>1 wave</p>"
          "<h3>Findings</h3><p>none</p></body></html>")


def _case(root: Path, name: str, argv: str, files: dict[str, str | dict]) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "argv").write_text(f"hotspot --no-cache {argv}\n")
    (folder / "exit_code").write_text("0\n")
    (folder / "stderr").write_text("")
    for fname, body in files.items():
        (folder / fname).write_text(json.dumps(body) if isinstance(body, dict) else body)


def _plan_doc(coverages: list[float], extra: bool = False) -> dict:
    data: dict = {"plan": {"items": [{"id": f"i{n}", "coverage": c} for n, c in enumerate(coverages)]},
                  "warnings": []}
    if extra:
        data["ceilings"] = None
    return {"schema_version": 3, "command": "analyze", "data": data}


def _records(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "A", tmp_path / "B"
    for root in (a, b):
        root.mkdir()
        (root / golden.MANIFEST).write_text("{}\n")
    # two json cases differing at the same key path (plus one extra key in the second), one not at all
    _case(a, "analyze_x_--plan_--format_json", "analyze <CORPUS>/x --plan --format json",
          {"stdout": _plan_doc([0.5, 0.25])})
    _case(b, "analyze_x_--plan_--format_json", "analyze <CORPUS>/x --plan --format json",
          {"stdout": _plan_doc([0.5, 0.3])})
    _case(a, "analyze_y_--plan_--format_json", "analyze <CORPUS>/y --plan --format json",
          {"stdout": _plan_doc([0.1])})
    _case(b, "analyze_y_--plan_--format_json", "analyze <CORPUS>/y --plan --format json",
          {"stdout": _plan_doc([0.2, 0.4], extra=True)})
    _case(a, "analyze_z_--format_json", "analyze <CORPUS>/z --format json", {"stdout": _plan_doc([1.0])})
    _case(b, "analyze_z_--format_json", "analyze <CORPUS>/z --format json", {"stdout": _plan_doc([1.0])})
    # text: a line under "Stall by category" differs; the exit code too
    _case(a, "analyze_x_--format_text", "analyze <CORPUS>/x", {"stdout": TEXT_A})
    _case(b, "analyze_x_--format_text", "analyze <CORPUS>/x", {"stdout": TEXT_A.replace("lds  40%", "lds  41%")})
    (b / "analyze_x_--format_text" / "exit_code").write_text("5\n")
    # a written html file: the paragraph under the h2 differs
    _case(a, "report_x_-o_report.html", "report <CORPUS>/x -o report.html", {"file~report.html": HTML_A})
    _case(b, "report_x_-o_report.html", "report <CORPUS>/x -o report.html",
          {"file~report.html": HTML_A.replace("1 wave", "2 waves")})
    # a case only in B
    _case(b, "plan_x_--brief_--format_text", "plan <CORPUS>/x --brief", {"stdout": "ok\n"})
    return a, b


def test_itemize_groups_every_difference_by_command_format_and_place(tmp_path: Path) -> None:
    a, b = _records(tmp_path)
    items = golden.itemize(a, b)
    counts = {key: len(item.cases) for key, item in items.items()}
    expected = {
        ("analyze --plan", "json", "data.plan.items[].coverage"): 2,
        ("analyze --plan", "json", "data.plan.items[] (length)"): 1,
        ("analyze --plan", "json", "data.ceilings (only in B)"): 1,
        ("analyze", "text", "§ Stall by category"): 1,
        ("analyze", "exit_code", "exit code"): 1,
        ("report", "html", "§ Summary"): 1,
    }
    only_b = {k: v for k, v in counts.items() if k[2] == "(file only in B)"}
    assert only_b == {("plan --brief", "argv", "(file only in B)"): 1,
                      ("plan --brief", "exit_code", "(file only in B)"): 1,
                      ("plan --brief", "stderr", "(file only in B)"): 1,
                      ("plan --brief", "text", "(file only in B)"): 1}
    assert {k: v for k, v in counts.items() if k[2] != "(file only in B)"} == expected
    cov = items[("analyze --plan", "json", "data.plan.items[].coverage")]
    assert cov.cases == {"analyze_x_--plan_--format_json", "analyze_y_--plan_--format_json"}
    assert cov.example_case == "analyze_x_--plan_--format_json" and cov.example == (0.25, 0.3)
    assert items[("analyze", "text", "§ Stall by category")].example == ("lds  40%", "lds  41%")
    assert items[("analyze", "exit_code", "exit code")].example == ("0", "5")
    html = items[("report", "html", "§ Summary")].example
    assert "1 wave" in str(html[0]) and "2 waves" in str(html[1])


def test_itemize_prints_one_line_per_group_and_exits_as_compare(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _records(tmp_path)
    assert golden.main(["--compare", str(a), str(b), "--itemize"]) == 1
    out = capsys.readouterr()
    lines = [line for line in out.out.splitlines() if not line.startswith(" ")]
    assert "analyze --plan | json | data.plan.items[].coverage: 2 case(s)" in lines
    assert "analyze | text | § Stall by category: 1 case(s)" in lines
    assert len(lines) == len(golden.itemize(a, b)) == 10
    assert "10 kind(s) of difference over 5 case(s)" in out.err
    assert golden.main(["--compare", str(a), str(a), "--itemize"]) == 0


def test_json_differences_name_structural_changes() -> None:
    diffs = golden.json_differences({"a": 1, "b": [1, 2], "c": {"x": 1}}, {"b": [1], "a": 1.0, "c": {}})
    assert diffs == {"c.x (only in A)": (1, None), "a": (1, 1.0), "b[] (length)": (2, 1),
                     "(document) (key order)": (["a", "b", "c"], ["b", "a", "c"])}
    assert golden.json_differences([{"k": True}], [{"k": 1}]) == {"[].k": (True, 1)}


def test_every_differing_stretch_is_named_by_its_section() -> None:
    b_text = TEXT_A.replace("lds  40%", "lds  41%").replace("- none", "- idle-slice")
    assert set(golden.file_differences(TEXT_A.encode(), b_text.encode(), "text")) == {
        "§ Stall by category", "§ Findings"}
    md_a, md_b = "# T\n\n## Plan\n1. a\n\n## More\nx\n", "# T\n\n## Plan\n1. b\n\n## More\ny\n"
    assert golden.file_differences(md_a.encode(), md_b.encode(), "markdown") == {
        "§ Plan": ("1. a", "1. b"), "§ More": ("x", "y")}
    # an inserted section is under its own heading; a style rule under <style>
    html_b = HTML_A.replace("<h3>Findings</h3>", "<h2>Roofline</h2><p>svg</p><h3>Findings</h3>") \
        .replace("p{}", "p{} svg{}")
    diffs = golden.file_differences(HTML_A.encode(), html_b.encode(), "html")
    assert set(diffs) == {"§ <style>", "§ Roofline"}
    assert "svg" in str(diffs["§ Roofline"][1]) and diffs["§ Roofline"][0] == "(none)"
