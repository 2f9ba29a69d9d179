"""Per-analysis costs cut for issue 37 point 7 (a fresh call inside the MCP server): the same
results, less work. A side file is parsed once per command (both sides of a diff search the same
folders), and the sequence groups' static facts pick out their rows at C speed."""

from __future__ import annotations

import shutil
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from hotspot.att.engine.groups import DECODER_JUMP, _backedges, _barrier_rows
from hotspot.att.waits.waitcnt_rules import ROLE_BARRIER, ROLE_WAIT, LineTables
from tests.conftest import corpus_path
from tests.test_read_once import opens  # noqa: F401  (the fixture)

SMALL = corpus_path("att", "gfx950", "flash_attn_replicates", "small")
KERNEL_TRACE = corpus_path("csv", "kernel_trace.csv")


def test_a_side_file_is_parsed_once_per_command(cli, corpus, tmp_path, opens):
    """Both sides of a diff in one run folder find the same kernel trace CSV: opened once."""
    run_dir = tmp_path / "run"
    sides = sorted(p for p in SMALL.iterdir() if p.is_dir())[:2]
    for side in sides:
        shutil.copytree(side, run_dir / side.name)
    csv = run_dir / "kernel_trace.csv"
    shutil.copyfile(KERNEL_TRACE, csv)
    opens.clear()
    run = cli("diff", *(run_dir / s.name for s in sides), "--format", "json", "--no-cache")
    assert run.exit_code == 0, run.stderr
    assert opens[str(csv.resolve())] == 1


def test_side_file_memo_lives_as_long_as_the_session(corpus, monkeypatch):
    import hotspot.capture.trace.kernel_trace as kt
    from hotspot.capture import capture_session
    from hotspot.capture.sidefiles import SIDE_FILES

    calls: list[str] = []
    real = kt.read_kernel_trace_csv

    def counted(path):  # type: ignore[no-untyped-def]
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(kt, "read_kernel_trace_csv", counted)
    side = next(s for s in SIDE_FILES if s.reader.endswith(":read_kernel_trace_csv"))
    with capture_session():
        first = side.read(KERNEL_TRACE)
        assert side.read(KERNEL_TRACE) is first
    assert len(calls) == 1
    assert side.read(KERNEL_TRACE) == first  # outside a session: read afresh
    assert len(calls) == 2


def _backedges_by_record(lines, cats):  # type: ignore[no-untyped-def]
    """The definition: a row after a jump whose line is lower is a taken backward branch."""
    taken: dict[tuple[int, int], int] = {}
    for j in range(1, min(len(lines), len(cats))):
        if cats[j - 1] == DECODER_JUMP and lines[j] < lines[j - 1]:
            taken[(lines[j - 1], lines[j])] = taken.get((lines[j - 1], lines[j]), 0) + 1
    return list(taken.items())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.sampled_from([0, 1, DECODER_JUMP, 7.0, "7", 3])),
                max_size=60), st.integers(0, 3))
def test_backedges_equal_their_definition(rows, extra):
    lines = [line for line, _ in rows]
    cats = [cat for _, cat in rows]
    # columns of unequal length (zip semantics) and int64 arrays as the native path hands them
    assert _backedges(lines, cats[:len(cats) - extra]) == _backedges_by_record(lines, cats[:len(cats) - extra])
    int_cats = [c if isinstance(c, int) else 0 for c in cats]
    assert _backedges(array("q", lines), array("q", int_cats)) == _backedges_by_record(lines, int_cats)


def test_backedges_by_hand():
    # 0 1 2(jump) 1 2(jump) 1 3(jump) 3: (2->1) twice; 3->3 is not backward
    lines = [0, 1, 2, 1, 2, 1, 3, 3]
    cats = [0, 0, DECODER_JUMP, 0, DECODER_JUMP, 0, DECODER_JUMP, 0]
    assert _backedges(lines, cats) == [((2, 1), 2)]


def test_barrier_rows_by_hand():
    tables = LineTables(roles={5: ROLE_BARRIER, 6: ROLE_WAIT, 9: ROLE_BARRIER},
                        pushes={}, scalar=frozenset(), waits={})
    assert _barrier_rows([1, 5, 6, 9, 5, 2], tables) == [(5, [1, 4]), (9, [3])]


def _shape_by_definition(lines, w):  # type: ignore[no-untyped-def]
    """Each scope's sums over the rows counted in it, in first-seen order (as the floats were
    always added)."""
    from collections import Counter

    def sums(hits):  # type: ignore[no-untyped-def]
        return (sum(c * w.mfma_cycles[n] for n, c in hits.items() if n in w.mfma_cycles),
                sum(c * w.valu_issue[n] for n, c in hits.items() if n in w.valu_issue),
                sum(c * w.vmem_bytes[n] for n, c in hits.items() if n in w.vmem_bytes))

    hits = Counter(lines)
    loops = []
    for lo, hi in w.loops:
        if lo in hits and hi in hits:
            loops.append(((lo, hi), lines.index(lo), len(lines) - 1 - lines[::-1].index(hi),
                          sums({n: c for n, c in hits.items() if lo <= n <= hi})))
    return sums(hits), loops


_WEIGHT = st.dictionaries(st.integers(0, 30), st.floats(0.01, 1e6), max_size=20)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.integers(0, 30), max_size=120), mfma=st.dictionaries(st.integers(0, 30), st.integers(1, 64)),
       valu=_WEIGHT, vmem=st.dictionaries(st.integers(0, 30), st.integers(1, 4096)),
       loops=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=4))
def test_issue_shape_sums_are_the_same_floats(lines, mfma, valu, vmem, loops):
    from hotspot.att.issue_share import IssueWeights, _shape

    w = IssueWeights([], None)
    w.mfma_cycles, w.valu_issue, w.vmem_bytes, w.loops = mfma, valu, vmem, loops
    assert repr(_shape(list(lines), w)) == repr(_shape_by_definition(list(lines), w))
