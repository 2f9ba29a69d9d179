"""The acceptance loop in headless Chromium: `sweep --init` -> edit -> `sweep recipes.yaml --gpus 0-3`
(fake rocprofv3) -> `sweep report -o`: the dashboard renders in a 1280 px window without a
horizontal scroll (a failed entry's long reason wraps, whole), sorts ascending on the first click,
links every entry's job.log and every done entry's own report, which renders too. Skipped when
Chromium is not installed."""

from __future__ import annotations

import json
import time

import pytest
import yaml

from tests.chromium import Browser, BrowserError, find_chromium
from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import (
    entry,
    hotspot,
    no_inherited_devices,  # noqa: F401  (autouse fixture)
)

pytestmark = [pytest.mark.chromium,
              pytest.mark.skipif(find_chromium() is None, reason="Chromium not installed (Debian: "
                                 "apt-get install chromium; or set HOTSPOT_CHROMIUM)")]

ROWS_JS = """Array.from(document.querySelectorAll('#entries tbody tr')).map(r => ({
  name: r.dataset.name, state: r.className, href: (r.querySelector('td:first-child a') || {}).href || null,
  cells: Array.from(r.cells).map(c => c.textContent)}))"""


def test_init_sweep_report_dashboard_in_chromium(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = fake.root / "recipes.yaml"
    assert hotspot("sweep", "--init", str(recipes)).returncode == 0
    doc = yaml.safe_load(recipes.read_text())
    # the edit a user makes: their own benchmarks instead of the example's
    # a failing entry whose reason is long (its command runs from a deep directory with long names)
    deep = fake.root / ("a_rather_long_directory_name_for_a_benchmark_suite/" * 8)
    deep.mkdir(parents=True)
    doc["entries"] = [entry("gemm", 0.0, rec, tags=["gemm"]), entry("norm", 0.0, rec, kernel=None),
                      entry("broken", 0.0, rec, code=5, cwd=str(deep))]
    doc["defaults"]["env"] = {"HOTSPOT_TEST_FLAG": "1"}
    recipes.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = hotspot("sweep", str(recipes), "--gpus", "0-3", "--format", "json")
    assert proc.returncode == 6, proc.stderr
    sweep_dir = json.loads(proc.stdout)["data"]["sweep_dir"]
    again = json.loads(hotspot("sweep", str(recipes), "--gpus", "0-3", "--format", "json").stdout)
    assert again["data"]["sweep_dir"] == sweep_dir and again["data"]["ran"] == []  # rerun skips everything
    out = fake.root / "dash.html"
    proc = hotspot("sweep", "report", sweep_dir, "-o", str(out), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["data"]
    table = hotspot("sweep", "report", sweep_dir).stdout.splitlines()
    rule = next(i for i, ln in enumerate(table) if ln.startswith("---"))  # title (may wrap), header, rule
    body = [ln.split()[0] for ln in table[rule + 1:rule + 1 + len(report["entries"])]]
    assert body == [e["name"] for e in report["entries"]]
    assert [e["name"] for e in report["entries"]][-1] == "broken"  # no plan: sorted last
    broken = next(e for e in report["entries"] if e["name"] == "broken")
    with Browser(window=(1280, 900)) as browser:
        page = browser.open(out.resolve().as_uri())
        page.wait_for("document.body.getAttribute('data-ready') === '1'", timeout=30)
        rows = page.evaluate(ROWS_JS)
        assert [r["name"] for r in rows] == [e["name"] for e in report["entries"]]
        by = {r["name"]: r for r in rows}
        assert by["broken"]["state"] == "state-failed" and by["broken"]["href"] is None
        assert "exited 5" in by["broken"]["cells"][1]
        # the whole reason (no cut mid-path), wrapped inside the page's 1280 px
        assert broken["reason"] in page.evaluate("document.querySelector('tr[data-name=broken] .reason').textContent")
        assert len(broken["reason"]) > 300
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        # every entry links its job.log, relative to the page
        logs = page.evaluate("Array.from(document.querySelectorAll('a.log')).map(a => a.href)")
        assert sorted(logs) == sorted(f"file://{e['log']}" for e in report["entries"])
        for e in report["entries"]:
            if e["state"] == "done":
                assert by[e["name"]]["href"] == f"file://{e['report_html']}"
                kernel_title = f"document.querySelector('tr[data-name={e['name']}] td.kernel').title"
                assert page.evaluate(kernel_title) == e["summary"]["kernel"]  # shown short, whole on hover
        # sorting by a real click on the header: ascending first, then descending
        assert page.click("th[data-key=name]")
        assert [r["name"] for r in page.evaluate(ROWS_JS)] == ["broken", "gemm", "norm"]
        assert page.click("th[data-key=name]")
        assert [r["name"] for r in page.evaluate(ROWS_JS)] == ["norm", "gemm", "broken"]
        log = page.log
        assert log.errors == [] and log.dialogs == []
        assert log.requests == [out.resolve().as_uri()]
        # the entry link opens that entry's own report, which renders
        assert page.click("tr[data-name=gemm] td:first-child a")
        opened = f"location.href === {json.dumps(by['gemm']['href'])} && " \
                 "document.querySelectorAll('section.dispatch').length > 0"
        deadline = time.monotonic() + 60
        while True:  # evaluating while the page navigates may hit the old, destroyed context
            try:
                if page.evaluate(opened):
                    break
            except BrowserError:
                pass
            assert time.monotonic() < deadline, "the entry's report did not open"
            time.sleep(0.05)
        gemm = next(e for e in report["entries"] if e["name"] == "gemm")
        from hotspot.kernel_names import short_kernel_name

        # the page's title carries the kernel's short form (parameters and template arguments elided)
        assert page.evaluate("document.title") == "hotspot report: " + short_kernel_name(gemm["summary"]["kernel"])
        page.close()


# Every word of the entries table drawn on one line (a Range over a word that wraps has client rects
# on two lines); every ellipsized word with its whole text in its cell's title; no cell overflowing.
WORDS_JS = """(() => {
  const table = document.getElementById('entries');
  const broken = [], clipped = [], untitled = [], overflowing = [], whole = [], styles = new Set();
  const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const re = /\\S+/g; let m;
    while ((m = re.exec(node.textContent))) {
      const r = document.createRange();
      r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      const tops = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  table.querySelectorAll('th, td, .w').forEach(el => {
    const cs = getComputedStyle(el);
    styles.add(cs.overflowWrap + '/' + cs.wordBreak);
    if (el.matches('.w') && el.scrollWidth > el.clientWidth + 1) {
      clipped.push(el.textContent);
      if (el.closest('th, td.num')) whole.push(el.textContent);  // headers and numbers never clipped
      const cell = el.closest('td, th');
      // the whole text on hover: every piece of what is shown (a short kernel name elides with …)
      if (!el.textContent.split('\u2026').every(p => (cell.title || '').includes(p))) untitled.push(el.textContent);
    }
    if (!el.matches('.w') && el.scrollWidth > el.clientWidth + 1) overflowing.push(el.textContent.slice(0, 80));
  });
  return {broken, clipped, untitled, overflowing, whole, styles: Array.from(styles),
          words: table.querySelectorAll('.w').length, width: document.documentElement.scrollWidth};
})()"""


def test_dashboard_at_1280_px_breaks_no_word(fake, tmp_path, monkeypatch):
    """Worst cases of each column: a long entry name, a discovered C++ kernel name, a `kernel:` entry
    (avg ns from the trace's kernel), a failure whose reason holds a 400-character path, a Slurm
    task COMPLETED on a long node name."""
    from hotspot.sweep import manifest as mf
    from hotspot.sweep import slurm, views
    from hotspot.sweep_records import TaskRow

    rec = tmp_path / "rec.jsonl"
    deep = fake.root / ("a_rather_long_directory_name_for_a_benchmark_suite/" * 8)
    deep.mkdir(parents=True)
    recipes = fake.root / "r.yaml"
    recipes.write_text(yaml.safe_dump({"entries": [
        entry("gemm_bf16_with_a_rather_long_entry_name", 0.0, rec, kernel=None),
        entry("given", 0.0, rec), entry("broken", 0.0, rec, code=5, cwd=str(deep))]}, sort_keys=False))
    sw = fake.root / "sw"
    assert hotspot("sweep", str(recipes), "--gpus", "0-2", "-o", str(sw)).returncode == 6
    node = "gpu-node-with-a-rather-long-name-017"
    with mf.locked(sw) as doc:
        doc.slurm = mf.SlurmJob("1234567", "sweep.sbatch", 1, mf.utc_iso(), False, partition=None)
        for w in doc.workers.values():
            w.slurm = {"slurm_array_job_id": "1234567", "slurm_array_task_id": "0"}
    monkeypatch.setattr(slurm, "sacct", lambda jobs: ({"1234567": {"0": TaskRow("1234567_0", "COMPLETED", 0, node,
                                                                                None, "sacct")}}, "sacct"))
    out = fake.root / "dash.html"
    report = views.sweep_report(sw, html=str(out)).data
    with Browser(window=(1280, 900)) as browser:
        page = browser.open(out.resolve().as_uri())
        page.wait_for("document.body.getAttribute('data-ready') === '1'", timeout=30)
        got = page.evaluate(WORDS_JS)
        assert got["broken"] == [] and got["overflowing"] == [] and got["untitled"] == [] and got["whole"] == []
        assert got["styles"] == ["normal/normal"] and got["width"] <= 1280
        assert got["clipped"]  # the long path was ellipsized (whole in the title), not broken
        # sorted: the arrow after a header breaks no word either
        assert page.click("th[data-key=headroom]")
        assert page.evaluate(WORDS_JS)["broken"] == []
        cells = {r["name"]: r["cells"] for r in page.evaluate(ROWS_JS)}
        assert f"1234567_0 COMPLETED on {node}" in cells["given"][12]
        by = {e.name: e for e in report.entries}
        # avg ns of the `kernel:` entry: from the kernel trace, as the JSON has it
        assert by["given"].summary.duration_ns is not None
        assert cells["given"][4].strip() == f"{by['given'].summary.duration_ns:,.0f}"
        titles = page.evaluate("Array.from(document.querySelectorAll('#entries tbody tr')).map("
                               "r => [r.dataset.name, r.cells[2].title])")
        for name, title in titles:
            assert title == (by[name].summary.kernel if by[name].summary else "")
        page.close()
