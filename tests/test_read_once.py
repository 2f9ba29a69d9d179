"""report and export read the capture once (issue 14): every file of the capture is opened at most
once per command, counted by wrapping the calls that open files."""

from __future__ import annotations

import builtins
import io
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import corpus_path

CAPTURES = [corpus_path("att", "gfx950", "vec_add"), corpus_path("att", "gfx942", "ck_bmm")]


@pytest.fixture
def opens(monkeypatch):
    """Counter of resolved paths opened through os.open / open / io.open while the test runs, and
    of the wave files the native fold opens itself (`Fold.files`, through read_natively)."""
    seen: Counter[str] = Counter()
    real_os_open, real_open = os.open, builtins.open

    def key(path) -> str | None:
        try:
            return str(Path(os.fsdecode(path)).resolve()) if not isinstance(path, int) else None
        except (TypeError, ValueError):
            return None

    def os_open(path, *args, **kwargs):
        k = key(path)
        if k:
            seen[k] += 1
        return real_os_open(path, *args, **kwargs)

    def py_open(file, *args, **kwargs):
        k = key(file)
        if k:
            seen[k] += 1
        return real_open(file, *args, **kwargs)

    import hotspot.capture as capture_pkg

    real_native = capture_pkg.read_natively

    def read_natively(batch, paths, ses, simds, start, stop, max_bytes, keep=None):
        got = real_native(batch, paths, ses, simds, start, stop, max_bytes, keep)
        i, _, res = got
        # files start..i-1 were read in C, and file i too when it came back read (res)
        for path in paths[start:i + (res is not None)]:
            k = key(path)
            if k:
                seen[k] += 1
        return got

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", py_open)
    monkeypatch.setattr(io, "open", py_open)
    monkeypatch.setattr(capture_pkg, "read_natively", read_natively)
    return seen


def _capture_copy(src: Path, tmp_path: Path, seen: Counter[str]) -> Path:
    """A private copy of the capture; the copying itself is not counted."""
    dst = tmp_path / "capture"
    shutil.copytree(src, dst)
    seen.clear()
    return dst


def _opened_twice(seen: Counter[str], root: Path) -> dict[str, int]:
    root_s = str(root.resolve())
    return {p: n for p, n in seen.items() if p.startswith(root_s) and n > 1}


@pytest.mark.parametrize("src", CAPTURES, ids=lambda p: p.name)
def test_report_opens_each_capture_file_once(cli, corpus, tmp_path, opens, src: Path) -> None:
    cap = _capture_copy(src, tmp_path, opens)
    out = tmp_path / "r.html"
    res = cli("report", cap, "-o", out, "--format", "json")
    assert res.exit_code == 0, res.stderr
    touched = [p for p in opens if p.startswith(str(cap.resolve()))]
    assert any(p.endswith("code.json") for p in touched)  # the count is real: code.json was read
    assert any("_wv" in p for p in touched)               # and so were wave files
    assert _opened_twice(opens, cap) == {}


@pytest.mark.parametrize("src", CAPTURES, ids=lambda p: p.name)
def test_export_opens_each_capture_file_once(cli, corpus, tmp_path, opens, src: Path) -> None:
    cap = _capture_copy(src, tmp_path, opens)
    res = cli("export", "perfetto", cap, "-o", tmp_path / "t.json", "--format", "json")
    assert res.exit_code == 0, res.stderr
    assert any(p.endswith("code.json") for p in opens if p.startswith(str(cap.resolve())))
    assert _opened_twice(opens, cap) == {}


def test_analyze_plan_opens_each_capture_file_once(cli, corpus, tmp_path, opens) -> None:
    cap = _capture_copy(CAPTURES[1], tmp_path, opens)  # two dispatch dirs: ranking, then the analysis
    res = cli("analyze", cap, "--plan", "--format", "json")
    assert res.exit_code == 0, res.stderr
    assert _opened_twice(opens, cap) == {}
