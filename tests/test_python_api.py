"""The Python API (docs/python-api.md): its examples run, its results are the commands' documents,
and `import hotspot` does not load it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS, run_cli

DOC = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"
COUNTERS = CORPUS / "pmc/rocprof-compute_MI300X_bmm1"
DOC_COUNTERS = '"workloads/bmm/MI300X_A1"'  # the doc's stand-in for the reader's counter folder


def test_doc_examples_run(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 5
    namespace: dict[str, object] = {}
    for block in blocks:  # in order, one namespace: a notebook's cells
        exec(compile(block.replace(DOC_COUNTERS, repr(str(COUNTERS))), str(DOC), "exec"), namespace)
    out = capsys.readouterr().out
    assert "same code: True" in out  # a capture against itself
    assert "bad-input 3 " in out  # the error example: the CLI's code and exit code


def test_results_are_the_commands_documents(corpus: Path) -> None:
    import hotspot

    d1 = CORPUS / "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_1"
    d2 = d1.with_name("ui_output_agent_5600_dispatch_2")
    pairs = [(hotspot.analyze(d1, plan=True, topk=3), ["analyze", str(d1), "--plan", "--topk", "3"]),
             (hotspot.diff(d1, d2), ["diff", str(d1), str(d2)]),
             (hotspot.pmc(COUNTERS), ["pmc", str(COUNTERS)])]
    for result, argv in pairs:
        cli = run_cli(*argv, "--format", "json")
        assert json.loads(result.to_json()) == json.loads(cli.stdout), argv
    planned = pairs[0][0].data
    assert planned.plan.items and planned.analysis.totals.stall > 0  # typed records, attributes
    import hotspot.diff.api  # the package keeps its modules and stays callable

    assert callable(hotspot.diff) and hotspot.diff.api.diff_paths is not None


def test_import_hotspot_loads_no_api() -> None:
    code = ("import sys, hotspot; print(sorted(m for m in sys.modules if m.startswith('hotspot'))); "
            "hotspot.analyze; print('hotspot.api' in sys.modules)")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert lines == ["['hotspot', 'hotspot._version']", "True"]


def test_cached_cli_run_loads_neither_the_api_nor_the_analysis(corpus: Path, tmp_path: Path) -> None:
    # issue 37 point 8: the Python API costs nothing on the command line's run path. A repeated
    # `hotspot plan DIR` is replayed from the output cache (hotspot/console.py) before typer, the
    # analysis or the API is imported.
    capture = CORPUS / "layouts/kernel-lab/blockscale_preshuffle_gemm/att_viewer/big/ui_output_agent_14065_dispatch_120"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOTSPOT_CACHE": "on"}
    first = subprocess.run([sys.executable, "-m", "hotspot", "plan", str(capture)], capture_output=True,
                           env=env, cwd=tmp_path, timeout=120)
    assert first.returncode == 0, first.stderr
    probe = ("import runpy, sys; sys.argv = ['hotspot', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('hotspot', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "sys.stdout.flush(); print(' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    again = subprocess.run([sys.executable, "-c", probe, "plan", str(capture)], capture_output=True, env=env,
                           cwd=tmp_path, timeout=120)
    loaded = set(again.stderr.decode().strip().splitlines()[-1].split())
    assert again.stdout == first.stdout
    assert "hotspot.cache.output" in loaded  # the replay ran
    heavy = {"hotspot.api", "hotspot._callable", "hotspot.mcp", "hotspot.cli", "hotspot.plan", "hotspot.diff",
             "hotspot.pmc", "hotspot.att", "hotspot.capture", "hotspot.render", "typer", "click", "orjson",
             "typing", "mcp", "numpy"}
    assert not heavy & loaded, sorted(heavy & loaded)
