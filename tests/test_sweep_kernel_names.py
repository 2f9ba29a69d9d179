"""Two instantiations of one template are two kernels: the sweep report (text, markdown) and its
dashboard show each row's kernel in as much detail as tells it from the others (kernel_names.py),
not the same `reduce_kernel<…>` twice."""

from __future__ import annotations

from pathlib import Path

from hotspot.render.sweep import render_report, render_report_markdown
from hotspot.result import Result
from hotspot.sweep.dashboard import render_dashboard
from hotspot.sweep_records import EntryRow, EntryStatus, RecipesRef, ReportData, Summary

A = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>>>(at::native::ReduceOp<float, at::native::MeanOps<float, float>>)"
B = "void at::native::reduce_kernel<256, 2, at::native::ReduceOp<float, at::native::MeanOps<float, float>>>(at::native::ReduceOp<float, at::native::MeanOps<float, float>>)"
OTHER = "void vectorized_elementwise_kernel<4>(int, float*)"


def _entry(name: str, kernel: str | None) -> EntryRow:
    s = (Summary(kernel, "gfx942", None, None, 1000.0, None, None, None, None, None, None, None, None, False, None,
                 None) if kernel else None)
    return EntryRow(name, EntryStatus.DONE if kernel else EntryStatus.FAILED, 1, None, None, None, None, None,
                    None, None, None, None, None, None, None, None, None, [], [], s, [])


def _report(tmp_path: Path) -> Result[ReportData]:
    entries = [_entry("mean_a", A), _entry("mean_b", B), _entry("add", OTHER), _entry("broken", None)]
    data = ReportData(str(tmp_path), RecipesRef(str(tmp_path / "r.yaml"), "0" * 64, ""), {"done": 3, "failed": 1},
                      4, "headroom", entries, None)
    return Result("sweep report", data)


def test_text_report_tells_two_instantiations_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    lines = render_report(_report(tmp_path)).splitlines()
    row = {ln.split()[0]: ln for ln in lines if ln.split()[:1] in (["mean_a"], ["mean_b"], ["add"])}
    # by hand: the first template argument is where A and B differ; namespaces are dropped
    assert "reduce_kernel<512, 1, ReduceOp<…>>" in row["mean_a"]
    assert "reduce_kernel<256, 2, ReduceOp<…>>" in row["mean_b"]
    assert "vectorized_elementwise_kernel<…>" in row["add"]   # alone of its name: least detail


def test_markdown_report_tells_two_instantiations_apart(tmp_path):
    rows = [ln for ln in render_report_markdown(_report(tmp_path)).splitlines() if ln.startswith("| mean_")]
    a, b = (r.split(" | ")[2] for r in rows)
    assert a != b and len(a) <= 60 and len(b) <= 60


def test_dashboard_tells_two_instantiations_apart(tmp_path):
    import re
    from html import unescape

    page = render_dashboard(_report(tmp_path).data, tmp_path)
    shown = [" ".join(unescape(w) for w in re.findall(r'<span class="w">(.*?)</span>', cell))
             for cell in re.findall(r'class="kernel"[^>]*>(.*?)</td>', page)]
    assert shown == ["reduce_kernel<512, 1, ReduceOp<…>>", "reduce_kernel<256, 2, ReduceOp<…>>",
                     "vectorized_elementwise_kernel<…>", ""]
