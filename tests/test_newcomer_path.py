"""The newcomer's path as a test (issue 38, done-when): the README's quick start and its next steps
run as they are written, as subprocesses of the installed `hotspot` at COLUMNS=80 in an empty
folder: each exits as docs/exit-codes.md says, and every line printed on the terminal fits 80
columns. (A fresh venv per run is too slow for the suite: the installed package stands in for it.)
The report the path writes is opened in Chromium by tests/test_browser_report.py
`test_example_report_opened_in_chromium` (no raw key dumps, the roofline drawn at 1280 px)."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
HOTSPOT = Path(sys.executable).parent / "hotspot"
WIDTH = 80

# One worker: the `walked` fixture runs the README's steps once per module, not once per worker.
pytestmark = pytest.mark.xdist_group("newcomer-path")


def _block(marker: str) -> list[str]:
    """The command lines of the README's ```bash block after `<!-- quickstart:MARKER -->`."""
    text = README.read_text()
    m = re.search(rf"<!-- quickstart:{marker} -->\s*```bash\n(.*?)```", text, re.S)
    assert m, f"the README's quickstart:{marker} block is gone"
    return [ln for ln in m.group(1).splitlines() if ln.strip()]


def _shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One README line, its `.venv/bin/hotspot` the installed one, run by the shell (redirections
    as written); comments dropped."""
    command = line.split("  #")[0].replace(".venv/bin/hotspot", str(HOTSPOT))
    env = {**os.environ, "COLUMNS": str(WIDTH), "HOTSPOT_CACHE": "off"}
    env.pop("NO_COLOR", None)
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def _fits(out: str, what: str) -> None:
    wide = [ln for ln in out.splitlines() if len(ln) > WIDTH]
    assert not wide, f"{what}: {len(wide)} line(s) over {WIDTH} columns, e.g. {wide[0]!r}"


@pytest.fixture(scope="module")
def walked(tmp_path_factory) -> tuple[Path, dict[str, subprocess.CompletedProcess[str]]]:
    if not HOTSPOT.exists():
        pytest.skip(f"no installed hotspot console script beside {sys.executable}")
    cwd = tmp_path_factory.mktemp("newcomer")
    # the quick start's own command (after its pip install), then the next steps in order
    install = _block("install")
    assert len(install) == 1 and install[0].endswith("&& .venv/bin/hotspot analyze --example")
    lines = [".venv/bin/hotspot analyze --example", *_block("next")]
    return cwd, {line: _shell(line, cwd) for line in lines}


def test_every_readme_step_succeeds_and_fits_80_columns(walked) -> None:
    _, runs = walked
    assert len(runs) >= 6
    for line, p in runs.items():
        assert p.returncode == 0, f"{line}: exit {p.returncode}: {p.stderr}"
        assert "Traceback" not in p.stderr, line
        if ">" not in line:  # what reached the terminal
            assert p.stdout.strip(), line
            _fits(p.stdout, line)


def test_the_steps_give_what_they_promise(walked) -> None:
    cwd, runs = walked
    first = runs[".venv/bin/hotspot analyze --example"].stdout.splitlines()
    assert first[0].startswith("hotspot: ") and " on gfx" in first[0]  # the verdict first
    assert any(ln.startswith("trust: ") for ln in first[:3])
    assert (cwd / "r.html").stat().st_size > 10_000
    saved = json.loads((cwd / "saved.json").read_text())["data"]
    assert saved["tables_complete"] is True
    assert len(saved["instructions"]) == saved["dispatch"]["executed_instructions"]
    with (cwd / "instructions.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["line_number"]) for r in rows] == [i["line_number"] for i in saved["instructions"]]
    two = next(p.stdout for line, p in runs.items() if "--section verdict,stall" in line)
    assert two.startswith("hotspot: ") and "Stall by category" in two and "Top instructions" not in two


@pytest.mark.parametrize("argv,code,says", [
    (["analyze", "notes.csv"], 3, "neither a capture directory nor a saved"),
    (["plan", "notes.csv"], 3, "neither a capture directory nor a saved"),
    (["analyze", "--example", "--section", "nope"], 2, "unknown section nope"),
    (["export", "perfetto", "saved.json", "-o", "t.json"], 3, "a saved analysis holds no wave timelines"),
    (["report", "saved.json", "-o", "r.html"], 3, "already exists"),
], ids=["analyze-csv", "plan-csv", "section", "export-saved", "report-over"])
def test_the_wrong_turns_exit_as_documented(walked, argv, code, says) -> None:
    cwd, _ = walked
    (cwd / "notes.csv").write_text("Dispatch_ID,Kernel_Name\n1,k\n")
    before = (cwd / "r.html").read_bytes()
    p = subprocess.run([str(HOTSPOT), *argv], cwd=cwd, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "COLUMNS": str(WIDTH), "HOTSPOT_CACHE": "off"})
    assert p.returncode == code, p.stderr
    assert says in p.stderr and "(next: " in p.stderr and p.stdout == ""
    assert "Traceback" not in p.stderr
    assert (cwd / "r.html").read_bytes() == before and not (cwd / "t.json").exists()
    documented = (ROOT / "docs" / "exit-codes.md").read_text()
    assert re.search(rf"^\| {code} \|", documented, re.M)
