"""Achieved occupancy from occupancy.json: reader validation and the time-weighted computation."""

from __future__ import annotations

from collections import defaultdict

import orjson
import pytest

from hotspot.arch.achieved import achieved_occupancy
from hotspot.capture.occupancy_json import (
    OccupancyEvent,
    parse_occupancy,
    read_occupancy_json,
)
from hotspot.errors import InputError


def ev(time, cu, simd, slot, start, kernel=1):
    return OccupancyEvent(time, cu, simd, slot, bool(start), kernel)


def test_hand_built_trace():
    se0 = [
        ev(0, 0, 0, 0, 1), ev(5, 0, 0, 1, 1), ev(10, 0, 0, 0, 0), ev(10, 0, 0, 1, 0),   # SIMD A: 10 + 5
        ev(2, 0, 1, 0, 1), ev(4, 0, 1, 0, 0),                                           # SIMD B: 2
    ]
    se1 = [ev(1000, 3, 2, 0, 1), ev(1004, 3, 2, 0, 0)]                                  # SE1 window 4
    got = achieved_occupancy({0: se0, 1: se1})
    # (15 + 2 + 4) resident-cycles over windows (10 + 10 + 4)
    assert got.mean_waves_per_simd == pytest.approx(21 / 24)
    assert got.peak_waves_per_simd == 2
    assert (got.simds, got.waves) == (3, 4)
    assert got.window_cycles == {0: 10, 1: 4}
    assert (got.unmatched_starts, got.unmatched_ends) == (0, 0)


def test_slot_reuse_at_same_time_is_not_double_counted():
    rows = [ev(0, 0, 0, 0, 1), ev(5, 0, 0, 0, 1), ev(5, 0, 0, 0, 0), ev(9, 0, 0, 0, 0)]
    got = achieved_occupancy({0: rows})
    assert got.peak_waves_per_simd == 1
    assert got.mean_waves_per_simd == pytest.approx(1.0)
    assert got.unmatched_starts == 0


def test_kernel_filter_and_empty():
    rows = [ev(0, 0, 0, 0, 1, kernel=1), ev(8, 0, 0, 0, 0, kernel=1),
            ev(0, 1, 0, 0, 1, kernel=2), ev(2, 1, 0, 0, 0, kernel=2), ev(2, 1, 0, 1, 1, kernel=2),
            ev(4, 1, 0, 1, 0, kernel=2)]
    only2 = achieved_occupancy({0: rows}, kernel_ids=[2])
    assert only2.simds == 1 and only2.waves == 2 and only2.mean_waves_per_simd == pytest.approx(1.0)
    both = achieved_occupancy({0: rows})
    assert both.mean_waves_per_simd == pytest.approx((8 + 4) / (8 + 8))
    assert achieved_occupancy({0: rows}, kernel_ids=[7]) is None
    assert achieved_occupancy({}) is None


def test_unmatched_events_span_to_the_window_edges():
    rows = [ev(0, 0, 0, 0, 1), ev(10, 0, 0, 1, 0), ev(2, 0, 0, 2, 1), ev(6, 0, 0, 2, 0)]
    got = achieved_occupancy({0: rows})
    # slot 0 starts at 0 and never ends → [0, 10); slot 1 ends at 10 with no start → [0, 10); slot 2 [2, 6)
    assert got.unmatched_starts == 1 and got.unmatched_ends == 1
    assert got.mean_waves_per_simd == pytest.approx(24 / 10)
    assert got.peak_waves_per_simd == 3


def test_zero_length_window_has_no_mean():
    got = achieved_occupancy({0: [ev(5, 0, 0, 0, 1), ev(5, 0, 0, 0, 0)]})
    assert got.mean_waves_per_simd is None and got.simds == 1


def _write(tmp_path, doc):
    path = tmp_path / "occupancy.json"
    path.write_bytes(orjson.dumps(doc) if not isinstance(doc, bytes) else doc)
    return path


def test_reader_accepts_long_rows(tmp_path):
    doc = {"0": [[10, 1, 2, 0, 1, 1, 0, 0, 0, 5, 0], [20, 1, 2, 0, 0, 1, 0, 0, 0, 5, 0]],
           "dispatches": {"0": "0 / 0x0", "1": "my_kernel"}, "version": "3.0.0"}
    trace = read_occupancy_json(_write(tmp_path, doc))
    assert trace.events_by_se == {0: (ev(10, 1, 2, 0, 1), ev(20, 1, 2, 0, 0))}
    assert trace.dispatches == {0: "0 / 0x0", 1: "my_kernel"}
    assert trace.version == "3.0.0"


@pytest.mark.parametrize("doc,needle", [
    (b"{not json", "not valid JSON"),
    ([1, 2], "top level must be an object"),
    ({"0": [[1, 2, 3]]}, "row 0: 3 fields"),
    ({"0": [[1, 2, 3, 4, 2, 1]]}, "is_start) must be 0 or 1"),
    ({"0": [[1, -2, 3, 4, 1, 1]]}, "field 1 (cu)"),
    ({"0": [[1, 2, "x", 4, 1, 1]]}, "field 2 (simd)"),
    ({"0": [278737457153, 278745853953]}, "pre-3.0"),
    ({"0": {"a": 1}}, "SE 0: expected a list"),
    ({"zero": []}, "unexpected key 'zero'"),
    ({"0": [], "dispatches": []}, "'dispatches' must be an object"),
])
def test_reader_rejects_malformed(tmp_path, doc, needle):
    path = _write(tmp_path, doc)
    with pytest.raises(InputError) as info:
        read_occupancy_json(path)
    assert info.value.message.startswith(str(path))
    assert needle in info.value.message


def test_reader_missing_file(tmp_path):
    # read through capture/files.py like every input file: the same refusal and message
    with pytest.raises(InputError, match="nope.json: file not found"):
        read_occupancy_json(tmp_path / "nope.json")


def test_corpus_vec_add(corpus):
    path = corpus / "att" / "gfx950" / "vec_add" / "occupancy.json"
    trace = read_occupancy_json(path)
    got = achieved_occupancy(trace.events_by_se)
    raw = orjson.loads(path.read_bytes())
    rows = {int(se): r for se, r in raw.items() if se.isdigit()}
    # independent recomputation: pair each end with the open start of the same slot, file order
    busy, simds, starts, peak = 0, set(), 0, 0
    for se, se_rows in rows.items():
        open_at, resident = {}, defaultdict(int)
        for time, cu, simd, slot, start, _kernel in (r[:6] for r in se_rows):
            simds.add((se, cu, simd))
            if start:
                starts += 1
                open_at[(cu, simd, slot)] = time
                resident[(cu, simd)] += 1
                peak = max(peak, resident[(cu, simd)])
            else:
                busy += time - open_at.pop((cu, simd, slot))
                resident[(cu, simd)] -= 1
    windows = {se: max(r[0] for r in rs) - min(r[0] for r in rs) for se, rs in rows.items()}
    total_window = sum(windows[se] for se, _, _ in simds)
    assert got.waves == starts == 5000
    assert got.simds == len(simds) == 128
    assert got.window_cycles == windows
    assert got.mean_waves_per_simd == pytest.approx(busy / total_window)
    assert got.peak_waves_per_simd == peak == 8       # gfx950 cap: vec_add fills every slot
    assert 0 < got.mean_waves_per_simd < got.peak_waves_per_simd
    assert trace.dispatches[1] == "vecAddKernel_0"


def test_corpus_legacy_layout_is_rejected(corpus):
    with pytest.raises(InputError, match="pre-3.0"):
        read_occupancy_json(corpus / "att" / "other" / "legacy_pre3_ui" / "occupancy.json")


def test_parse_occupancy_direct():
    trace = parse_occupancy({"2": [[1, 0, 0, 0, 1, 3]], "version": "3.0.0"})
    assert list(trace.events_by_se) == [2] and trace.dispatches == {}


def test_busy_cus_per_se_and_one_round():
    # SE0: CUs 0 and 3 start waves before the first end (t=50): one round; CU 3's second SIMD too
    se0 = [ev(0, 0, 0, 0, 1), ev(4, 3, 0, 0, 1), ev(8, 3, 1, 0, 1),
           ev(50, 0, 0, 0, 0), ev(60, 3, 0, 0, 0), ev(70, 3, 1, 0, 0)]
    # SE1: one CU, one wave
    se1 = [ev(100, 5, 0, 0, 1), ev(900, 5, 0, 0, 0)]
    got = achieved_occupancy({0: se0, 1: se1})
    assert got.busy_cus_per_se == {0: 2, 1: 1}
    assert got.one_round is True


def test_a_start_at_or_after_the_first_end_is_a_second_round():
    # the slot freed at t=50 is refilled at t=50 (ends sort before starts): a second workgroup
    refill = [ev(0, 0, 0, 0, 1), ev(2, 1, 0, 0, 1), ev(50, 0, 0, 0, 0), ev(50, 0, 0, 0, 1),
              ev(90, 0, 0, 0, 0), ev(95, 1, 0, 0, 0)]
    got = achieved_occupancy({0: refill, 1: [ev(0, 2, 0, 0, 1), ev(9, 2, 0, 0, 0)]})
    assert got.busy_cus_per_se == {0: 2, 1: 1}
    assert got.one_round is False
    # a start one cycle before the first end is still the first round
    early = [ev(0, 0, 0, 0, 1), ev(49, 1, 0, 0, 1), ev(50, 0, 0, 0, 0), ev(60, 1, 0, 0, 0)]
    assert achieved_occupancy({0: early}).one_round is True


def test_one_round_is_unknown_without_a_wave_end_and_ignores_other_kernels():
    assert achieved_occupancy({0: [ev(0, 0, 0, 0, 1), ev(5, 1, 0, 0, 1)]}).one_round is None
    # kernel 2 starts on CU 4 after kernel 1's first end: not kernel 1's second round
    rows = [ev(0, 0, 0, 0, 1), ev(10, 0, 0, 0, 0), ev(20, 4, 0, 0, 1, kernel=2), ev(30, 4, 0, 0, 0, kernel=2)]
    got = achieved_occupancy({0: rows}, kernel_ids=[1])
    assert got.busy_cus_per_se == {0: 1} and got.one_round is True
    assert achieved_occupancy({0: rows}).one_round is False
