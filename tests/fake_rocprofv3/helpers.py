"""Pytest helpers that put the fake rocprofv3 on PATH with a fake decoder library and a clean ROCm env."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

FAKE_DIR = Path(__file__).resolve().parent
FAKE = FAKE_DIR / "rocprofv3"
DECODER = "librocprof-trace-decoder.so"


@dataclass
class FakeRocprof:
    root: Path  # the test's working directory (runs land in root/hotspot-runs)
    decoder_dir: Path
    log_path: Path

    def calls(self) -> list[dict]:
        """One entry per fake rocprofv3 invocation: argv, cwd, resolved jobs."""
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line.strip()]

    def runs(self) -> list[Path]:
        base = self.root / "hotspot-runs"
        return sorted(p for p in base.iterdir()) if base.is_dir() else []


def app(*code: str) -> list[str]:
    """A tiny Python application (argument list) for the fake to run."""
    return [sys.executable, "-c", "; ".join(code) or "pass"]


def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, with_fake: bool) -> None:
    from hotspot.collect import rocm_tools as tools

    for var in ("ROCM_PATH", "ROCPROF_ATT_LIBRARY_PATH", "LD_LIBRARY_PATH", "FAKE_ROCPROF_MODE",
                "FAKE_ROCPROF_ARCH", "FAKE_ROCPROF_WORKLOAD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(tools, "DEFAULT_ROCM_ROOTS", (str(tmp_path / "no-rocm"),))
    # venv python first (the fake's `#!/usr/bin/env python3` then finds pyyaml), then the fake.
    parts = [str(Path(sys.executable).parent)] + ([str(FAKE_DIR)] if with_fake else []) + ["/usr/bin", "/bin"]
    monkeypatch.setenv("PATH", os.pathsep.join(parts))


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeRocprof:
    clean_env(monkeypatch, tmp_path, with_fake=True)
    decoder_dir = tmp_path / "decoder"
    decoder_dir.mkdir()
    (decoder_dir / DECODER).write_bytes(b"")
    monkeypatch.setenv("ROCPROF_ATT_LIBRARY_PATH", str(decoder_dir))
    log = tmp_path / "fake-rocprofv3.jsonl"
    monkeypatch.setenv("FAKE_ROCPROF_LOG", str(log))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return FakeRocprof(work, decoder_dir, log)
