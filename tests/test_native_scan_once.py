"""Each wave file is scanned once (issue 37, point 7: diff's first call): the per-wave samples
diff resamples (PassOptions.sample) come from the columns of the C fold's own scan of the file
(`keep` of Fold.wave / Fold.files, `NativeFold.kept`), not from a scan of their own, and a new
sequence C declines is not scanned a second time. The samples and the partial equal the pure-Python
pass's, wave for wave."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from hotspot.att.engine import groups as wave_groups
from hotspot.att.engine import samples as wave_samples
from hotspot.att.engine import wavepass
from hotspot.att.engine.native import PURE_PYTHON_ENV, ScannedWave, scan
from hotspot.att.engine.wavepass import PassOptions, WavePartial, describe, run_chunk_open
from hotspot.att.waits.waitcnt_rules import build_tables
from hotspot.capture.codejson import read_code_json
from hotspot.capture.layout import open_dispatch
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch
from tests.test_native_flush_equal import _items
from tests.test_wavescan import mod  # noqa: F401  (fixture)


def _dispatch(tmp: Path, waves: int = 24, variants: int = 3, seed: int = 5) -> Path:
    spec = DispatchSpec(waves=waves, layout=Layout(ses=(0, 1), simds=2, slots=2, other_cus=(0,)),
                        variants=variants, program=InstructionMix(loop_trips=3))
    return make_dispatch(tmp, spec, seed=seed)


def _edit(path: Path, change: Any) -> None:
    doc = orjson.loads(path.read_bytes())
    change(doc["wave"])
    path.write_bytes(orjson.dumps(doc))


def _other_edges(w: dict) -> None:
    """Decoder edges that are not the reconstruction's (a wait blamed on another producer)."""
    w["waitcnt"] = [[line, [[max(1, p[0] - 1), 0] for p in prods]] for line, prods in w["waitcnt"]]


class _Counting:
    """A Fold that counts the wave files C scans: one per Fold.wave call, and per Fold.files
    call the files it read (those before the answer, and the answered one when it was read)."""

    def __init__(self, inner: Any, counts: dict[str, int]) -> None:
        self.inner = inner
        self.counts = counts

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def wave(self, *args: Any) -> Any:
        self.counts["c"] += 1
        return self.inner.wave(*args)

    def files(self, paths: list, ses: list, simds: list, start: int, stop: int, *rest: Any) -> Any:
        got = self.inner.files(paths, ses, simds, start, stop, *rest)
        self.counts["c"] += got[0] - start + (got[2] is not None)
        return got


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"c": 0, "py": 0}
    real_init = wave_groups.NativeFold.__init__

    def init(self: Any, *args: Any, **kw: Any) -> None:
        real_init(self, *args, **kw)
        self.fold = _Counting(self.fold, counts)
        if self.issue is not None:
            self.issue.fold = self.fold

    def py_scan(mod: Any, data: bytes) -> Any:
        counts["py"] += 1
        return scan(mod, data)

    monkeypatch.setattr(wave_groups.NativeFold, "__init__", init)
    monkeypatch.setattr(wavepass, "scan", py_scan)
    monkeypatch.setattr(wave_samples, "scan", py_scan)
    return counts


def _pass(d: Path, every: int, monkeypatch: pytest.MonkeyPatch, pure: bool) -> WavePartial:
    if pure:
        monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    else:
        monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    files = open_dispatch(d).wave_files
    opts = PassOptions(build_tables(read_code_json(d / "code.json").rows),
                       sample=frozenset(w.where for w in files[::every]))
    return run_chunk_open(describe(files), opts).finish()


@pytest.mark.parametrize("spill,mask", [(1 << 20, ~0), (2, ~0), (3, 0)],
                         ids=["plain", "spill", "hash-collisions"])
@pytest.mark.parametrize("every", [1, 3])
def test_each_wave_file_is_scanned_once_and_the_samples_equal_the_pure_pass(
        mod, tmp_path, monkeypatch, spill, mask, every):
    d = _dispatch(tmp_path)
    files = sorted(d.glob("se*_sm*_sl*_wv*.json"))
    _edit(files[0], _other_edges)  # a new sequence C declines after adopting its group
    _edit(files[7], _other_edges)  # other edges in a known sequence: the Python path
    _edit(files[11], lambda w: w.update(waitcnt=[]))  # no edges: blamed statically
    monkeypatch.setattr(wave_groups, "FOLD_SPILL_WAVES", spill)
    monkeypatch.setattr(wave_groups, "FOLD_HASH_MASK", mask)
    counts = _counted(monkeypatch)
    fast = _pass(d, every, monkeypatch, False)
    assert counts == {"c": len(files), "py": 0}  # every file scanned once, in C
    assert len(fast.samples) == len(files[::every])
    # each sample is the one a scan of its own file gives, taken alone (today's route: no
    # sequence facts shared, no replay handed over by the pass)
    tables = build_tables(read_code_json(d / "code.json").rows)
    by_path = {w.where: w for w in open_dispatch(d).wave_files}
    for path, got in fast.samples.items():
        alone = wave_samples.sample_scanned(by_path[path], scan(mod, Path(path).read_bytes()),
                                            tables, {}, None, None)
        assert got == alone, path
    pure = _pass(d, every, monkeypatch, True)
    # the pure path lists a wave's lines sorted, the native one in first-run order (the samples'
    # assembly aligns them): the same values per line
    assert {p: _by_line(s) for p, s in fast.samples.items()} == \
        {p: _by_line(s) for p, s in pure.samples.items()}
    assert list(fast.samples) == list(pure.samples)  # in the same order
    assert _sums(fast) == _sums(pure)


def _sums(part: WavePartial) -> tuple[Any, ...]:
    return (part.totals.per_line, part.line_states, _items(part.blame.blame),
            _items(part.blame.dist_cycles), part.backedges,
            {k: list(v) for k, v in part.barriers.items()})


def _by_line(sample: Any) -> tuple[Any, ...]:
    lines, stall, duration, hits, blame, placement = sample
    return dict(zip(lines, zip(stall, duration, hits))), blame, placement


def test_kept_columns_are_the_scan_of_the_file_and_change_no_sum(mod, tmp_path, monkeypatch):
    """NativeFold.wave with keep: the columns of a wave C folds (and of one it hands back and
    adopts) are those scan() reads from the same bytes; the partial is the one without keep."""
    d = _dispatch(tmp_path, waves=12, variants=2)
    monkeypatch.setattr(wave_groups, "FOLD_SPILL_WAVES", 3)  # the sums-due answer (-4) too
    tables = build_tables(read_code_json(d / "code.json").rows)
    waves = [(w.where, w.se, w.simd) for w in open_dispatch(d).wave_files]
    parts = []
    for keep in (True, False):
        part = WavePartial()
        fused = part.native = wave_groups.NativeFold(mod, part, tables)
        for path, se, simd in waves:
            data = Path(path).read_bytes()
            assert fused.wave(data, se, simd, keep) == (True, None)  # every wave folded in C
            if keep:
                assert fused.kept == ScannedWave(*mod.scan(data))
            elif fused.kept is not None:  # only a wave handed back (and adopted) leaves columns
                assert fused.kept == ScannedWave(*mod.scan(data))
        fused.detach()
        parts.append(asdict(part.finish()))
    assert parts[0] == parts[1]


def test_fold_files_answers_at_each_kept_file_with_its_columns(mod, tmp_path):
    """Fold.files with keep: a wanted file is answered even when C folds it, without its bytes
    (data None) and with the columns scan() reads; the other files are folded on."""
    d = _dispatch(tmp_path, waves=10, variants=1)
    paths = sorted(str(p) for p in d.glob("se*_sm*_sl*_wv*.json"))
    n = len(paths)
    tables = build_tables(read_code_json(d / "code.json").rows)
    part = WavePartial()
    fused = part.native = wave_groups.NativeFold(mod, part, tables)
    # the first file: a new sequence, handed back with its bytes, then adopted
    i, data, res = fused.files(paths, [0] * n, [0] * n, 0, n, None)
    assert (i, data) == (0, Path(paths[0]).read_bytes()) and res is not None and res[1] == -1
    assert fused.folded(res, data, 0, 0) == (True, None)
    wanted = {3, 4, 8}
    keep = bytes(k in wanted for k in range(n))
    start, answered = 1, []
    while start < n:
        i, data, res = fused.files(paths, [0] * n, [0] * n, start, n, None, keep)
        if i == n:
            assert res is None
            break
        answered.append(i)
        assert data is None and res is not None and res[1] in (-3, -4)
        assert fused.folded(res, None, 0, 0) == (True, None)
        assert fused.kept == ScannedWave(*mod.scan(Path(paths[i]).read_bytes()))
        start = i + 1
    assert answered == sorted(wanted)
    with pytest.raises(ValueError):
        fused.fold.files(paths, [0] * n, [0] * n, 0, n, -1, b"\x01")  # not one per path
