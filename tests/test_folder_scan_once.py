"""A dispatch folder is listed once when opened, whether filenames.json lists the wave files or
not (hotspot/capture/layout.py: the names and the files' identity come from one scan)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hotspot.capture import layout
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch


@pytest.mark.parametrize("listed", [True, False])
def test_the_folder_is_scanned_once(tmp_path, monkeypatch, listed):
    spec = DispatchSpec(waves=6, layout=Layout(ses=(0,), simds=2, slots=1, other_cus=()),
                        variants=1, program=InstructionMix(loop_trips=2))
    d = make_dispatch(tmp_path, spec, seed=2)
    want = sorted(p.name for p in d.glob("se*_sm*_sl*_wv*.json"))
    if not listed:  # the waves are then found by their names in the folder
        fn = d / "filenames.json"
        doc = json.loads(fn.read_text())
        del doc["wave_filenames"]
        fn.write_text(json.dumps(doc))
    scans: list[str] = []
    scandir, listdir = os.scandir, os.listdir

    def counted_scandir(path):
        scans.append(os.fspath(path))
        return scandir(path)

    def counted_listdir(path):
        scans.append(os.fspath(path))
        return listdir(path)

    monkeypatch.setattr(layout.os, "scandir", counted_scandir)
    monkeypatch.setattr(layout.os, "listdir", counted_listdir)
    got = layout._open_dispatch(d)
    assert scans == [os.fspath(d)]
    assert sorted(Path(w.where).name for w in got.wave_files) == want
