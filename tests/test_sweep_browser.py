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
                assert e["summary"]["kernel"] in by[e["name"]]["cells"][2]
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
        from hotspot.render.tables import short_kernel_name

        # the page's title carries the kernel's short form (parameters and template arguments elided)
        assert page.evaluate("document.title") == "hotspot report: " + short_kernel_name(gemm["summary"]["kernel"])
        page.close()
