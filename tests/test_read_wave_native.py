"""`hotspot.att.engine.native.read_wave` (report and export, issue 19): through the scanner a wave's
records and timeline stay int64 columns (Rows), with the values, checks and errors of
`hotspot.capture.waves.read_wave`."""

from __future__ import annotations

import orjson
import pytest

from hotspot.att.engine import native as native_mod
from hotspot.capture import waves as capture_waves
from hotspot.capture.layout import open_dispatch
from hotspot.errors import HotspotError
from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch
from tests.conftest import corpus_path, run_cli
from tests.test_wavescan import mod  # noqa: F401  (fixture)


def _both(wf):
    out = []
    for reader in (native_mod.read_wave, capture_waves.read_wave):
        try:
            out.append(reader(wf))
        except HotspotError as exc:
            out.append((type(exc), exc.code, exc.message))
    return out


@pytest.mark.parametrize("path", [corpus_path("att", "gfx950", "vec_add"),
                                  corpus_path("att", "gfx942", "ck_bmm", "ui_output_agent_5600_dispatch_2")])
def test_corpus_waves_read_alike(mod, corpus, path):
    for wf in open_dispatch(path).wave_files[:40]:
        lean, whole = _both(wf)
        assert isinstance(lean.instructions, native_mod.Rows)
        assert lean == whole
        assert list(lean.instructions) == whole.instructions
        assert list(lean.timeline) == whole.timeline
        assert lean.instructions[3] == whole.instructions[3]
        assert lean.instructions[2:5] == whole.instructions[2:5]
        assert len(lean.instructions) == len(whole.instructions)
        assert sorted(lean.instructions, key=lambda r: -r[0]) == \
            sorted(whole.instructions, key=lambda r: -r[0])


@pytest.mark.parametrize("change", [
    lambda w: w["instructions"][1].__setitem__(2, -1),   # a value no decoder writes
    lambda w: w.update(begin=w["end"] + 1),
    lambda w: w["timeline"][0].__setitem__(0, 9),
    lambda w: w["instructions"][0].append(7),             # not the scanner's shape
    lambda w: w.pop("begin"),
])
def test_odd_waves_are_refused_or_read_alike(mod, tmp_path, change):
    d = make_dispatch(tmp_path, DispatchSpec(waves=2, program=InstructionMix(loop_trips=2)), seed=3)
    wf = open_dispatch(d).wave_files[0]
    doc = orjson.loads(wf.path.read_bytes())
    change(doc["wave"])
    wf.path.write_bytes(orjson.dumps(doc))
    lean, whole = _both(wf)
    assert lean == whole


def test_report_and_export_alike_with_and_without_native(mod, tmp_path, monkeypatch):
    d = make_dispatch(tmp_path, DispatchSpec(waves=6, program=InstructionMix(loop_trips=3)), seed=5)
    outs = []
    for pure in ("1", "0"):
        monkeypatch.setenv(native_mod.PURE_PYTHON_ENV, pure)
        trace, page = tmp_path / f"t{pure}.json", tmp_path / f"r{pure}.html"
        assert run_cli("export", "perfetto", str(d), "--instructions", "-o", str(trace)).exit_code == 0
        assert run_cli("report", str(d), "-o", str(page)).exit_code == 0
        outs.append((trace.read_bytes(), page.read_bytes()))
    assert outs[0] == outs[1]
