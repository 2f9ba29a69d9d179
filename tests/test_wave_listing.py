"""The wave listing of filenames.json (hotspot/capture/layout.py `WaveFiles`): one row per file,
read as the WaveFile objects it stands for, in (se, simd, slot, n) order, listing order on ties."""

from __future__ import annotations

import json
import os

from hotspot.att.engine.wavepass import describe
from hotspot.capture import WaveFile, WaveFiles, open_dispatch
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch


def _dispatch(tmp_path):
    spec = DispatchSpec(waves=12, layout=Layout(ses=(0, 1), simds=2, slots=2, other_cus=()),
                        variants=2, program=InstructionMix(loop_trips=2))
    return make_dispatch(tmp_path, spec, seed=3)


def test_the_listing_reads_as_its_wave_files_in_order(tmp_path):
    d = _dispatch(tmp_path)
    fn = d / "filenames.json"
    doc = json.loads(fn.read_text())
    # listed out of order, and one n written twice ("1" and "01": the same wave number) for two
    # files: listing order decides between them
    entries = [(se, simd, slot, n, e) for se, simds in doc["wave_filenames"].items()
               for simd, slots in simds.items() for slot, waves in slots.items()
               for n, e in waves.items()]
    entries.reverse()
    se, simd, slot, n, e = entries[0]
    listing: dict = {}
    for se_, simd_, slot_, n_, e_ in entries:
        listing.setdefault(se_, {}).setdefault(simd_, {}).setdefault(slot_, {})[n_] = e_
    (d / "extra.json").write_bytes((d / e[0]).read_bytes())
    listing[se][simd][slot]["0" + n] = ["extra.json", e[1] + 1, e[2] + 1]
    doc["wave_filenames"] = listing
    fn.write_text(json.dumps(doc))
    # what it stands for, worked out here: every listed entry in listing order, sorted stably
    walked = [(int(se_), int(simd_), int(slot_), int(n_), e_) for se_, simds in listing.items()
              for simd_, slots in simds.items() for slot_, waves in slots.items()
              for n_, e_ in waves.items()]
    walked.sort(key=lambda w: w[:4])
    want = [WaveFile(os.path.join(d, e_[0]), se_, simd_, slot_, n_, e_[1], e_[2])
            for se_, simd_, slot_, n_, e_ in walked]
    waves = open_dispatch(d).wave_files
    assert isinstance(waves, WaveFiles)
    assert list(waves) == want and len(waves) == len(want)
    assert [waves[i] for i in range(len(want))] == want and waves[-1] == want[-1]
    assert list(waves[2:7]) == want[2:7]
    assert waves == tuple(want) and waves == want and waves != want[1:]
    assert describe(waves) == [(w.where, w.se, w.simd, w.slot, w.n) for w in want]
    assert bool(waves) and not WaveFiles(str(d) + os.sep, [])


def test_a_file_listed_twice_is_one_wave(tmp_path):
    d = _dispatch(tmp_path)
    fn = d / "filenames.json"
    doc = json.loads(fn.read_text())
    slot = doc["wave_filenames"]["0"]["0"]["0"]
    first = next(iter(slot))
    slot["9" + first] = slot[first]
    fn.write_text(json.dumps(doc))
    disp = open_dispatch(d)
    names = [os.path.basename(w.where) for w in disp.wave_files]
    assert len(names) == len(set(names)) == 12
    assert any("repeat a file already counted" in w for w in disp.warnings)
