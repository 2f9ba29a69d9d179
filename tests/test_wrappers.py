"""scripts/hotspot_analyzer.py and scripts/pmc_l2_analyzer.py accept the predecessor's command lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import corpus_path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
PMC = ROOT / "tests" / "fixtures" / "pmc"


def run(script: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / script), *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.parametrize("flags", [["--topk", "15", "--mode", "both"],
                                   ["--topk", "5", "--mode", "src", "--detail", "--context", "4"],
                                   ["--kernel", "vecAdd"]])
def test_hotspot_analyzer_old_command_lines(corpus: Path, flags: list[str]) -> None:
    p = run("hotspot_analyzer.py", corpus_path("att", "gfx950", "vec_add"), *flags)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("hotspot: vecAddKernel_0 on gfx950")  # the verdict first
    assert "Stall by category" in p.stdout
    if "src" in flags:
        assert "Top source lines" in p.stdout and "Top instructions" not in p.stdout
        assert "Hot lines in detail" in p.stdout


def _load(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kernel_is_a_substring_not_a_regex() -> None:
    args = _load("hotspot_analyzer").build_args(["d", "--kernel", "gemm<float>(a.b)"])
    assert args[args.index("--kernel") + 1] == r"gemm<float>\(a\.b\)"
    pmc_args, note = _load("pmc_l2_analyzer").build_args(["a.csv", "--kernel", "k(x)"])
    assert pmc_args[pmc_args.index("--kernel") + 1] == r"k\(x\)" and note is None


def test_hotspot_analyzer_bad_kernel_and_json(corpus: Path) -> None:
    d = corpus_path("att", "gfx950", "vec_add")
    bad = run("hotspot_analyzer.py", d, "--kernel", "no_such(kernel")
    assert bad.returncode == 3 and bad.stderr.strip().splitlines()[-1].startswith("hotspot analyze:")
    js = run("hotspot_analyzer.py", d, "--format", "json", "--plan")
    assert js.returncode == 0
    import json
    assert json.loads(js.stdout)["data"]["plan"] is not None


def test_pmc_l2_analyzer_old_command_line() -> None:
    p = run("pmc_l2_analyzer.py", PMC / "l2.csv", PMC / "ea.csv", "--kernel", "gemm_kernel",
            "--ideal-gb", "0.0001", "--ea-channels", "2")
    assert p.returncode == 0, p.stderr
    assert "--ea-channels 2 ignored" in p.stderr and "already summed" in p.stderr
    assert "gemm_kernel" in p.stdout and "copy_kernel" not in p.stdout
    assert "100.00 KB" in p.stdout  # --ideal-gb 0.0001 = 1e5 bytes reached hotspot pmc


def test_pmc_l2_analyzer_on_corpus_csv(corpus: Path) -> None:
    csv = corpus_path("csv", "counter_collection.csv")
    p = run("pmc_l2_analyzer.py", csv, csv, "--kernel", "addition_kernel", "--ideal-gb", "1",
            "--ea-channels", "2")
    assert p.returncode == 9, p.stderr  # hotspot pmc's code: the file holds only SQ_WAVES (unusable counters)
    assert "addition_kernel" in p.stdout


def test_hotspot_analyzer_accepts_dir_option_and_positional() -> None:
    mod = _load("hotspot_analyzer")
    assert mod.build_args(["--dir", "d1"])[1] == "d1"
    assert mod.build_args(["d2", "--topk", "3"])[1] == "d2"
    assert mod.build_args(["--dir", "d3", "d3"])[1] == "d3"
    with pytest.raises(SystemExit) as exc:
        mod.build_args(["--topk", "3"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        mod.build_args(["a", "--dir", "b"])


def test_hotspot_analyzer_dir_option_runs(corpus: Path) -> None:
    p = run("hotspot_analyzer.py", "--dir", corpus_path("att", "gfx950", "vec_add"), "--topk", "3")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("hotspot: vecAddKernel_0 on gfx950")  # the verdict first


def test_hotspot_analyzer_without_package_says_how_to_install(tmp_path: Path) -> None:
    # A copy of the script outside any checkout, run by an interpreter that cannot import hotspot.
    script = tmp_path / "hotspot_analyzer.py"
    script.write_text((SCRIPTS / "hotspot_analyzer.py").read_text())
    p = subprocess.run([sys.executable, "-I", "-S", str(script), "d"], capture_output=True,
                       text=True, timeout=60, cwd=tmp_path)
    assert p.returncode == 5
    assert "not installed" in p.stderr and "-m pip install" in p.stderr
