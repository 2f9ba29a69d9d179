"""Helpers for the sweep tests: recipes that run tests/fixtures/sweep/app.py under the fake rocprofv3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

APP = Path(__file__).resolve().parent / "fixtures" / "sweep" / "app.py"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def no_inherited_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """A device list in the test's own environment would re-map --gpus (see scheduler.pin_env)."""
    for var in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(var, raising=False)


def entry(name: str, sleep_s: float | str, record: Path, *, code: int = 0, kernel: str | None = "^reduce",
          stubborn: bool = False, leak: bool = False, **extra: Any) -> dict[str, Any]:
    """One recipe entry; a kernel regex skips discovery (one app run per capture). sleep_s may be
    "@PATH": the app waits for that file."""
    e: dict[str, Any] = {"name": name, "cmd": [sys.executable, str(APP), name, str(sleep_s), str(code), str(record)]
                         + (["stubborn"] if stubborn else []) + (["leak"] if leak else [])}
    if kernel:
        e["kernel"] = kernel
    e.update(extra)
    return e


def write_recipes(path: Path, entries: list[dict[str, Any]], **top: Any) -> Path:
    doc: dict[str, Any] = {"entries": entries, **top}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def finished(path: Path) -> list[dict[str, Any]]:
    return [r for r in records(path) if "end" in r]


def hotspot(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hotspot", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd)


def start_hotspot(*args: str, cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hotspot", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)


def manifest(sweep_dir: Path) -> dict[str, Any]:
    return json.loads((sweep_dir / "sweep.json").read_text())


def new_manifest(entries: list[tuple[str, str]] = (), workers: dict[str, float] | None = None):
    """A typed manifest in memory: (name, state) entries of a one-line recipe, workers by id with
    their last heartbeat (unix time)."""
    from hotspot.sweep import manifest as mf
    from hotspot.sweep.recipes import Entry

    doc = mf.new_document(mf.RecipesRef("r.yaml", "x", ""), [], mf.RunOptions(2, None, None, None, []))
    for name, state in entries:
        doc.entries.append(mf.EntryState(name, "x", Entry(name=name, cmd=("true",), cwd="/").recipe(), state=state))
    for wid, beat in (workers or {}).items():
        doc.workers[wid] = mf.WorkerInfo(wid.rpartition(":")[0], int(wid.rpartition(":")[2]), [], "", None,
                                         heartbeat_unix=beat)
    return doc


def states(sweep_dir: Path) -> dict[str, str]:
    return {e["name"]: e["state"] for e in manifest(sweep_dir)["entries"]}


class LinesOf:
    """A running process's text stream, read line by line in a thread: a test waits for a line the
    process says (instead of sleeping and hoping it has said it), and reads the whole text after."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line)

    def count(self, needle: str) -> int:
        return sum(needle in line for line in list(self.lines))

    def text(self, timeout: float = 120) -> str:
        """The whole stream, once the process closed it."""
        self._thread.join(timeout)
        return "".join(self.lines)


def wait_until(pred, timeout: float = 30.0, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {pred}")
        time.sleep(step)


def no_overlap_per_gpu(recs: list[dict[str, Any]]) -> None:
    """The scheduling invariant: app runs of different entries never overlap on one GPU."""
    by_gpu: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        # pinned at the ROCr level; HIP then numbers that one device 0
        assert r["gpu"] is not None and r["hip"] == "0", r
        by_gpu.setdefault(r["gpu"], []).append(r)
    for gpu, runs in by_gpu.items():
        runs.sort(key=lambda r: r["start"])
        for a, b in zip(runs, runs[1:]):
            assert a["end"] <= b["start"] or a["name"] == b["name"], f"GPU {gpu}: {a} overlaps {b}"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False
