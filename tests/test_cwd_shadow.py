"""The installed `hotspot` runs from any folder, including the one that holds the clone.

After the README's editable install a user who `cd`s to the clone's parent folder has a directory
named `hotspot` in the cwd. Worker processes of the wave pass must still import the installed
package (they used to import that folder as a namespace package and die: BrokenProcessPool)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hotspot.att.engine.worker_count import EXPLICIT_POOL_MIN_BYTES as PARALLEL_MIN_BYTES

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _console_script() -> Path:
    exe = Path(sys.executable).parent / "hotspot"
    if not exe.exists():
        found = shutil.which("hotspot")
        if found is None:
            pytest.skip("the hotspot console script is not installed next to this interpreter")
        exe = Path(found)
    return exe


def _wave_bytes(dispatch: Path) -> int:
    return sum(p.stat().st_size for p in dispatch.glob("se*_sm*_sl*_wv*.json"))


def test_pool_workers_import_the_installed_package_from_a_shadowing_cwd(tmp_path: Path) -> None:
    exe = _console_script()
    cwd = tmp_path / "work"
    (cwd / "hotspot").mkdir(parents=True)  # the clone's folder name, seen from its parent
    (cwd / "hotspot" / "README.md").write_text("not the package\n")
    gen = subprocess.run([sys.executable, str(PROJECT_ROOT / "scripts" / "make_dispatch.py"),
                          "--out", str(tmp_path / "cap"), "--target-mb", "20"],
                         capture_output=True, text=True, timeout=300)
    assert gen.returncode == 0, gen.stderr
    (dispatch,) = (tmp_path / "cap").iterdir()
    assert _wave_bytes(dispatch) >= PARALLEL_MIN_BYTES  # large enough for the process pool

    # HOTSPOT_CACHE=off: both runs make the wave pass (no result cache answers the second).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env["HOTSPOT_CACHE"] = "off"
    runs = {}
    for jobs in ("2", "1"):
        done = subprocess.run([str(exe), "analyze", str(dispatch), "--jobs", jobs, "--format", "json"],
                              cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr and "ImportError" not in done.stderr
        runs[jobs] = json.loads(done.stdout)
    assert runs["2"]["ok"] is True
    assert runs["2"]["data"] == runs["1"]["data"]  # the pool changes nothing but the speed


def test_python_m_hotspot_from_a_shadowing_cwd(tmp_path: Path) -> None:
    """`python -m hotspot` puts the cwd first on sys.path: a `hotspot/` folder there becomes the
    package namespace (the editable install's finder comes later). Everything still imports."""
    cwd = tmp_path / "work"
    (cwd / "hotspot").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    version = subprocess.run([sys.executable, "-m", "hotspot", "--version"], cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0, version.stderr
    from hotspot import __version__

    assert version.stdout.strip() == f"hotspot {__version__}"
    run = subprocess.run([sys.executable, "-m", "hotspot", "analyze", "--example", "--format", "json"],
                         cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["ok"] is True


def test_version_is_the_project_version() -> None:
    import re

    from hotspot import __version__

    # tomllib is 3.11+; the [project] table's version line is enough
    found = re.search(r'^version = "([^"]+)"$', (PROJECT_ROOT / "pyproject.toml").read_text(), re.M)
    assert found and found.group(1) == __version__
