"""Fold.files (hotspot/att/engine/_wavescan.c) against misuse and odd input: its open flags are
files.py's, a file past the kept buffer is left to Python unread, one call at a time per Fold,
hooks that change its lists, Ctrl-C between files, a negative cap; and the C flush helpers against
their Python twins on random groups (overflowing products, negative sums, waits without a
producer)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import weakref
from array import array
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hotspot.att.engine import groups as wave_groups
from hotspot.att.engine.groups import NativeFold
from hotspot.att.engine.wavepass import PassOptions, WavePartial, describe, run_chunk_open
from hotspot.att.waits.accumulate import BlameAccumulator
from hotspot.att.waits.waitcnt_rules import build_tables
from hotspot.capture import files as capture_files
from hotspot.capture import read_natively
from hotspot.capture.codejson import read_code_json
from hotspot.capture.layout import open_dispatch
from hotspot.errors import InputError
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch
from tests.test_native_flush_equal import _items
from tests.test_wavescan import mod  # noqa: F401  (fixture)

I64 = (1 << 63) - 1


def _needs_files(mod) -> None:
    if not hasattr(mod.Fold(1), "files"):
        pytest.skip("no Fold.files on this platform")


def _one_sequence(root: Path, waves: int, trips: int = 2) -> tuple[Path, list[str]]:
    """A dispatch whose waves all run one sequence: after the first, C folds each itself."""
    spec = DispatchSpec(waves=waves, layout=Layout(ses=(0,), simds=1, slots=1, other_cus=()),
                        variants=1, program=InstructionMix(loop_trips=trips))
    d = make_dispatch(root, spec, seed=5)
    return d, [w.where for w in open_dispatch(d).wave_files]


def _registered(mod, d: Path, files: list[str]) -> NativeFold:
    """A native fold that knows the sequence of `files` (its first file folded)."""
    nf = NativeFold(mod, WavePartial(), build_tables(read_code_json(d / "code.json").rows))
    got = nf.files(files, [0] * len(files), [0] * len(files), 0, len(files), None)
    assert got is not None and got[0] == 0 and got[1] is not None  # a new sequence: handed back
    assert nf.folded(got[2], got[1], 0, 0) == (True, None)  # registered and folded in C
    nf.fold.take_totals()  # from zero again
    return nf


def test_file_flags_are_the_python_readers(mod):
    _needs_files(mod)
    assert mod.FILE_FLAGS == capture_files._OPEN_FLAGS | capture_files._NOFOLLOW
    assert mod.FILE_FLAGS & os.O_NOFOLLOW and mod.FILE_FLAGS & os.O_NONBLOCK


def test_a_file_past_the_kept_buffer_is_left_unread(mod, tmp_path):
    """Such a file comes back unread (Python reads and folds it), so the buffer never grows past
    the bound: a sparse file, nothing is written."""
    _needs_files(mod)
    big = tmp_path / "se0_sm0_sl0_wv0.json"
    with open(big, "wb") as fh:
        fh.truncate(mod.KEEP_BUF_BYTES - 1)  # its buffer, with the NUL and the extra byte: past it
    small = tmp_path / "small.json"
    small.write_bytes(b"{}")
    fold = mod.Fold(1 << 20)
    paths = [str(small), str(big)]
    assert fold.files(paths, [0, 0], [0, 0], 1, 2, -1) == (1, None, None)
    got = fold.files(paths, [0, 0], [0, 0], 0, 2, -1)  # read (not a wave: handed back with bytes)
    assert got[0] == 0 and got[1] == b"{}"
    with open(big, "r+b") as fh:
        fh.truncate(mod.KEEP_BUF_BYTES - 2)  # exactly the bound: read in C
    got = fold.files(paths, [0, 0], [0, 0], 1, 2, -1)
    assert got[0] == 1 and got[1] is not None and len(got[1]) == mod.KEEP_BUF_BYTES - 2


class _Hooked:
    """A path whose __fspath__ runs `hook` first (Fold.files converts each path in the loop)."""

    def __init__(self, path: str, hook) -> None:
        self.path, self.hook = path, hook

    def __fspath__(self) -> str:
        self.hook()
        return self.path


def test_a_second_call_while_one_runs_is_refused(mod, tmp_path):
    _needs_files(mod)
    d, files = _one_sequence(tmp_path, 3)
    fold = mod.Fold(1 << 20)
    n = len(files)
    seen: list[str] = []

    def reenter() -> None:  # the same thread, from inside the call
        try:
            fold.files(files, [0] * n, [0] * n, 0, n, -1)
        except RuntimeError as exc:
            seen.append(str(exc))

    paths: list[object] = [_Hooked(files[0], reenter)] + files[1:]
    got = fold.files(paths, [0] * n, [0] * n, 0, n, -1)
    assert seen and "already running" in seen[0]
    assert got[0] == 0 and got[1] == Path(files[0]).read_bytes()  # the outer call is unharmed

    release = threading.Event()

    def other_thread() -> None:
        try:
            fold.files(files, [0] * n, [0] * n, 0, n, -1)
        except RuntimeError as exc:
            seen.append(str(exc))
        release.set()

    def wait_for_other() -> None:  # waits without the GIL, inside the call
        t = threading.Thread(target=other_thread)
        t.start()
        assert release.wait(30)
        t.join()

    seen.clear()
    paths = [_Hooked(files[0], wait_for_other)] + files[1:]
    fold.files(paths, [0] * n, [0] * n, 0, n, -1)
    assert len(seen) == 1 and "already running" in seen[0]

    def fail() -> None:
        raise KeyError("from the hook")

    with pytest.raises(KeyError):
        fold.files([_Hooked(files[0], fail)], [0], [0], 0, 1, -1)
    got = fold.files(files, [0] * n, [0] * n, 0, n, -1)  # a failed call leaves the Fold usable
    assert got[0] == 0 and got[1] == Path(files[0]).read_bytes()


def test_hooks_that_change_the_lists(mod, tmp_path):
    """A hook may empty the lists mid-call: the path in use stays alive until C is done with it,
    and the next file finds the lists changed (an error, not a read past their end)."""
    _needs_files(mod)
    d, files = _one_sequence(tmp_path, 4)
    nf = _registered(mod, d, files)
    n = len(files)
    ses, simds = [0] * n, [0] * n
    events: list[str] = []

    class Owned(_Hooked):
        pass

    paths: list[object] = list(files)

    def clear() -> None:
        del paths[:], ses[:], simds[:]
        events.append("cleared")

    paths[1] = Owned(files[1], clear)
    ref = weakref.ref(paths[1], lambda _: events.append("freed"))
    with pytest.raises(RuntimeError, match="lists changed"):
        nf.fold.files(paths, ses, simds, 1, n, -1)
    assert events == ["cleared", "freed"] and ref() is None
    assert nf.fold.take_totals()[0] == 1  # file 1 was folded before the change was noticed

    # the SE's __index__ empties the lists before the path is audited and converted: the path,
    # which only the list held, lives until C is done with it
    events.clear()

    class Index:
        def __index__(self) -> int:
            del paths2[:]
            events.append("cleared")
            return 0

    paths2: list[object] = [Owned(f, lambda: events.append("fspath")) for f in files]
    ref = weakref.ref(paths2[0], lambda _: events.append("freed"))
    with pytest.raises(RuntimeError, match="lists changed"):
        nf.fold.files(paths2, [Index()] + [0] * (n - 1), [0] * n, 0, n, -1)
    assert events == ["cleared", "fspath", "freed"] and ref() is None
    assert nf.fold.take_totals()[0] == 1  # file 0, read from the path kept alive
    with pytest.raises(ValueError, match="range"):  # start after stop
        nf.fold.files(files, [0] * n, [0] * n, 3, 2, -1)
    with pytest.raises(TypeError):  # a SIMD that is not a number, after a good SE
        nf.fold.files(files, [0] * n, ["x"] * n, 0, n, -1)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_an_interrupt_stops_the_call_between_files(mod, tmp_path):
    """A signal arriving while C folds a run of files is acted on after the file in hand, not
    after the whole run: the handler's exception leaves the call with files still unread."""
    _needs_files(mod)
    d, files = _one_sequence(tmp_path, 40, trips=150)  # files C takes a while on
    nf = _registered(mod, d, files)
    n = len(files)

    class Stop(Exception):
        pass

    where: list[str] = []

    def handler(signum, frame):
        where.append(frame.f_code.co_name)
        raise Stop

    go = [False]

    def interrupt() -> None:
        # Spins for the GIL: its requests make the call hand the GIL over at its first read
        # without it (after the last Python code, which sets `go`), and the signal comes then.
        while not go[0]:
            pass
        signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

    old = signal.signal(signal.SIGUSR1, handler)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _attempt in range(5):
            go[0] = False
            where.clear()
            paths: list[object] = list(files)
            paths[1] = _Hooked(files[1], lambda: go.__setitem__(0, True))
            t = threading.Thread(target=interrupt)
            t.start()
            try:
                with pytest.raises(Stop):
                    nf.fold.files(paths, [0] * n, [0] * n, 1, n, -1)
            finally:
                t.join()
            if where != ["__fspath__"]:  # else it came while Python still ran: again
                break
    finally:
        sys.setswitchinterval(interval)
        signal.signal(signal.SIGUSR1, old)
    assert where == [sys._getframe().f_code.co_name]  # raised in this frame, from the call
    folded = nf.fold.take_totals()[0]
    assert 1 <= folded < n - 2  # the file in hand when the signal came, and those before it


def test_a_negative_cap_refuses_every_file_on_both_paths(mod, tmp_path):
    _needs_files(mod)
    d, files = _one_sequence(tmp_path, 2)
    fold = mod.Fold(1 << 20)
    for cap in (-1, -5, -(1 << 70)):
        got = read_natively(fold.files, files, [0, 0], [0, 0], 0, 2, cap)
        assert got == (0, None, None)  # unread: Python refuses it
    assert read_natively(fold.files, files, [0, 0], [0, 0], 0, 2, 1 << 70)[1] is not None  # no cap
    assert read_natively(fold.files, files, [0, 0], [0, 0], 0, 2, None)[1] is not None
    assert fold.files(files, [0, 0], [0, 0], 0, 2, -2) == (0, None, None)
    tables = build_tables(read_code_json(d / "code.json").rows)
    for cap in (-1, -5):
        with pytest.raises(InputError, match="limit"):
            run_chunk_open(describe(open_dispatch(d).wave_files), PassOptions(tables, max_bytes=cap))


def _random_group(draw: st.DrawFn) -> tuple[SimpleNamespace, list[int], list[int], list[int], int]:
    n = draw(st.integers(1, 30))
    lines = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    positions = sorted(draw(st.sets(st.integers(0, n - 1))))
    if positions and draw(st.booleans()):
        positions = positions + positions[:2]  # a wait position repeated
    producers = {w: draw(st.lists(st.integers(0, n - 1), max_size=3)) for w in positions
                 if draw(st.booleans())}  # others: waits with no producer
    big = st.integers(I64 // 4, I64)
    value = draw(st.sampled_from([st.integers(0, 100), st.integers(-100, 100), big,
                                  big.map(lambda v: -v - 1)]))
    g = SimpleNamespace(lines=array("q", lines), positions=positions, producers=producers,
                        wait_stall=array("q", [draw(value) for _ in positions]),
                        blame_waves=draw(st.sampled_from([1, 3, I64 // 2, I64])), pair_lines=[],
                        distances={}, pair_hists=None, pair_entries=None)
    columns = [[draw(value) for _ in range(k)] for k in (n, n)]
    charge = [draw(value) if draw(st.booleans()) else 0 for _ in range(n * wave_groups.N_STATES)]
    return g, columns[0], columns[1], charge, draw(st.sampled_from([1, 2, I64]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=st.composite(_random_group)())
def test_native_flush_equals_python_on_random_groups(mod, drawn):
    """The reviewer's differential: blame waves times positions overflowing int64, negative sums,
    positions with no producer. C either gives Python's numbers or leaves the work to them."""
    g, duration, stall, charge, waves = drawn
    got, want = BlameAccumulator.empty(), BlameAccumulator.empty()
    errors = []
    for acc, m in ((got, mod), (want, None)):
        try:
            wave_groups._flush_blame(g, acc, m)  # type: ignore[arg-type]  # the fields it reads
            errors.append(None)
        except Exception as exc:  # noqa: BLE001 - both paths must agree on failing too
            errors.append(type(exc))
    assert errors[0] == errors[1]
    for field in ("blame", "wait_stall", "wait_hits", "dist_cycles", "dist_instructions"):
        assert _items(getattr(got, field)) == _items(getattr(want, field)), field
    pa: dict = {}
    la: dict = {}
    pb: dict = {}
    lb: dict = {}
    lines = list(g.lines)
    mod.fold_lines(pa, la, g.lines, waves, array("q", duration), array("q", stall), array("q", charge))
    wave_groups._fold_lines(pb, lb, lines, waves, duration, stall, charge)
    assert _items(pa) == _items(pb) and _items(la) == _items(lb)
    sums = mod.charge_sums(array("q", charge))
    if sums is not None:  # None: a sum past int64, left to Python
        assert sums == [sum(charge[i::wave_groups.N_STATES]) for i in range(wave_groups.N_STATES)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=st.lists(st.composite(_random_group)(), min_size=1, max_size=4))
def test_native_flush_of_all_groups_equals_python_on_random_groups(mod, drawn):
    """The same differential for fold_lines_all / blame_waits_all (several groups at once): C gives
    the Python loops' dicts, group after group, or declines with nothing changed."""
    got, want = BlameAccumulator.empty(), BlameAccumulator.empty()
    groups = [g for g, *_ in drawn]
    try:
        done = mod.blame_waits_all(
            [(g.lines, g.positions, g.wait_stall, g.producers, g.blame_waves) for g in groups],
            wave_groups.NO_PRODUCER, got.blame, got.wait_stall, got.wait_hits, got.dist_cycles,
            got.dist_instructions)
        error = None
    except Exception as exc:  # noqa: BLE001 - a bad position fails both ways
        done, error = False, type(exc)
    want_error = None
    try:
        for g in groups:
            wave_groups._blame_waits(g, want)  # type: ignore[arg-type]  # the fields it reads
    except Exception as exc:  # noqa: BLE001
        want_error = type(exc)
    if error is not None:
        assert error == want_error
    fields = ("blame", "wait_stall", "wait_hits", "dist_cycles", "dist_instructions")
    for field in fields:
        if done:
            assert _items(getattr(got, field)) == _items(getattr(want, field)), field
        elif error is None:
            assert not getattr(got, field), field  # declined: untouched
    pa: dict = {}
    la: dict = {}
    pb: dict = {}
    lb: dict = {}
    items = [(g.lines, waves, array("q", d), array("q", s), array("q", c)) for g, d, s, c, waves in drawn]
    done = mod.fold_lines_all(pa, la, items)
    for g, d, s, c, waves in drawn:
        wave_groups._fold_lines(pb, lb, list(g.lines), waves, d, s, c)
    if done:
        assert _items(pa) == _items(pb) and _items(la) == _items(lb)
    else:
        assert pa == {} and la == {}
