"""Wait attribution: hand-computed blame, distances and lgkm breakdown on tiny dispatch dirs, the
counter reconstruction rules, and exact blame conservation + edge agreement on the corpus."""

from __future__ import annotations

import difflib
import json
from fractions import Fraction
from pathlib import Path

import pytest

from hotspot.att.engine.wavepass import PassOptions, run_wave_pass
from hotspot.att.waits.waitcnt_rules import NO_PRODUCER, build_tables
from hotspot.att.waits.reduce import exact_blame
from hotspot.att.waits.replay import edge_keys, entry_keys, reconstruct
from hotspot.capture.codejson import read_code_json
from hotspot.capture.layout import open_dispatch
from tests.test_analyze_corpus import DISPATCH_DIRS
from tests.test_wavepass_builder import (
    IMMED,
    LDS,
    MESSAGE,
    SMEM,
    VALU,
    VMEM,
    Schedule,
    W,
    build_dispatch,
)

# The same corpus captures are analyzed by several tests and commands here: their wave pass is
# made once per test process (tests/conftest.py shared_analyses).
pytestmark = pytest.mark.usefixtures("shared_analyses")

PROGRAM = [
    ("s_load_dwordx2 s[4:5], s[0:1], 0x0", "/src/k.py:10"),                 # 1
    ("buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen", "/src/k.py:20"),    # 2
    ("buffer_load_dwordx4 v[4:7], v8, s[8:11], 0 offen", "/src/k.py:21"),   # 3
    ("v_add_f32_e32 v0, v1, v2", "/src/k.py:22"),                           # 4
    ("s_waitcnt vmcnt(1)", "/src/k.py:23"),                                 # 5
    ("s_waitcnt vmcnt(0) lgkmcnt(0)", "/src/k.py:23"),                      # 6
    ("s_waitcnt vmcnt(0)", "/src/k.py:24"),                                 # 7
    ("s_endpgm", "/src/k.py:24"),                                           # 8
]


def _wave(begin: int, wait5_stall: int) -> list[list[int]]:
    return (Schedule(begin).op(1, SMEM).op(2, VMEM).op(3, VMEM, stall=4).op(4, VALU)
            .op(5, IMMED, stall=wait5_stall).op(6, IMMED, stall=50).op(7, IMMED, stall=10)
            .op(8, MESSAGE).records)


# The decoder's edges for this program: wait 5 pops row 2; wait 6 pops row 1 (lgkm) then row 3 (vm).
DECODER_EDGES = [[5, [[2, 0]]], [6, [[1, 0]]], [6, [[3, 0]]]]


def _analyze(cli, d: Path) -> dict:
    run = cli("analyze", d, "--format", "json", "--topk", "0")
    assert run.exit_code == 0, run.stderr
    return run.json()["data"]


@pytest.fixture
def two_waves(tmp_path) -> Path:
    # wave A carries the decoder's edges, wave B none (static reconstruction)
    return build_dispatch(tmp_path / "ui_output_agent_1_dispatch_1", PROGRAM, [
        W(_wave(100, 100), 100, simd=0, edges=DECODER_EDGES),
        W(_wave(1000, 30), 1000, simd=1),
    ])


def test_blame_and_distances_hand_computed(cli, two_waves):
    data = _analyze(cli, two_waves)
    waits = {w["line_number"]: w for w in data["waits"]}
    # wait 5: 100 + 30 cycles, all on row 2; issue of row 2 is 104 (A) / 1004 (B), wait at 120 / 1020
    w5 = waits[5]
    assert w5["stall"] == 130 and w5["hits"] == 2
    assert [(p["line_number"], p["blamed_stall"], p["share"]) for p in w5["producers"]] == [(2, 130.0, 1.0)]
    assert w5["producers"][0]["median_distance_cycles"] == 16
    assert w5["producers"][0]["median_distance_instructions"] == 2  # rows 3 and 4 in between
    # wait 6: 50 + 50 split equally over row 1 (lgkm) and row 3 (vm)
    w6 = {p["line_number"]: p for p in waits[6]["producers"]}
    assert waits[6]["stall"] == 100
    assert w6[1]["blamed_stall"] == 50.0 and w6[3]["blamed_stall"] == 50.0
    # A: wait at 224, row 1 issued 100, row 3 issued 112; B: wait at 1054, 1000, 1012
    assert w6[1]["median_distance_cycles"] == (124 + 54) / 2
    assert w6[3]["median_distance_cycles"] == (112 + 42) / 2
    assert w6[1]["median_distance_instructions"] == 4 and w6[3]["median_distance_instructions"] == 2
    assert w6[1]["category"] == "smem" and w6[3]["category"] == "vmem-load"
    # wait 7: nothing outstanding -> the explicit bucket keeps the sum equal to the stall
    (p7,) = waits[7]["producers"]
    assert p7["line_number"] is None and p7["blamed_stall"] == 20.0 and p7["category"] == "none"
    # every wait: producers sum to the wait's stall
    for w in data["waits"]:
        assert sum(p["blamed_stall"] for p in w["producers"]) == pytest.approx(w["stall"])
    attr = data["attribution"]
    assert (attr["waves_with_edges"], attr["waves_reconstructed"]) == (1, 1)
    assert attr["edge_entries"] == 3 and attr["reconstruction_agreement"] == 1.0
    assert attr["waits_stall"] == 250 and attr["no_producer_stall"] == 20.0


def test_blamed_lines_and_lgkm_breakdown(cli, two_waves):
    data = _analyze(cli, two_waves)
    blamed = [(b["label"], b["blamed_stall"]) for b in data["blamed_lines"]]
    assert blamed == [("/src/k.py:20", 130.0), ("/src/k.py:10", 50.0), ("/src/k.py:21", 50.0)]
    assert data["blamed_lines"][0]["share"] == pytest.approx(130 / 250)
    bd = data["lgkm_breakdown"]
    # only wait 6 counts lgkm; half of it is the scalar load, half the vm load of the mixed wait
    assert bd["stall"] == 100 and bd["lgkm_stall"] == 50.0 and bd["vmem_stall"] == 50.0
    assert {c["producer_class"]: c["stall"] for c in bd["classes"]}["smem"] == 50.0
    assert bd["smem_share"] == 1.0 and bd["cross_lane_share"] == 0.0
    # 50 of 258 stall cycles (19%) on kernel-argument loads at entry -> lgkm-smem, prologue case
    ids = {f["id"]: f for f in data["findings"]}
    assert "lgkm-smem" in ids and ids["lgkm-smem"]["evidence"]["prologue"] is True
    assert "lgkm-cross-lane" not in ids


def test_edges_win_over_the_reconstruction(cli, tmp_path):
    # a decoder that says wait 5 waited for row 3 and wait 6 for rows 1 and 2
    edges = [[5, [[3, 0]]], [6, [[1, 0]]], [6, [[2, 0]]]]
    d = build_dispatch(tmp_path / "d", PROGRAM, [W(_wave(100, 100), 100, edges=edges)])
    data = _analyze(cli, d)
    waits = {w["line_number"]: w for w in data["waits"]}
    assert [p["line_number"] for p in waits[5]["producers"]] == [3]
    assert sorted(p["line_number"] for p in waits[6]["producers"]) == [1, 2]
    assert waits[5]["producers"][0]["median_distance_cycles"] == 120 - 112
    assert data["attribution"]["edge_entries_reconstructed"] == 1  # only (6, [1]) agreed


def test_cross_lane_only_kernel_raises_lgkm_cross_lane(cli, tmp_path):
    program = [("v_mov_b32_e32 v1, 0", "/src/r.py:5"),
               ("ds_bpermute_b32 v2, v3, v1", "/src/r.py:6"),
               ("s_waitcnt lgkmcnt(0)", "/src/r.py:6"),
               ("ds_bpermute_b32 v4, v3, v2", "/src/r.py:7"),
               ("s_waitcnt lgkmcnt(0)", "/src/r.py:7"),
               ("v_add_f32_e32 v5, v4, v2", "/src/r.py:8"),
               ("s_endpgm", "/src/r.py:8")]
    recs = (Schedule(0).op(1, VALU).op(2, LDS).op(3, IMMED, stall=120).op(4, LDS)
            .op(5, IMMED, stall=80).op(6, VALU).op(7, MESSAGE).records)
    d = build_dispatch(tmp_path / "d", program, [W(recs, 0)])
    data = _analyze(cli, d)
    bd = data["lgkm_breakdown"]
    assert bd["stall"] == 200 and bd["lgkm_stall"] == 200.0 and bd["cross_lane_share"] == 1.0
    assert bd["classes"][0] == {"producer_class": "cross-lane", "stall": 200.0, "share": 1.0}
    ids = {f["id"]: f for f in data["findings"]}
    assert "lgkm-cross-lane" in ids
    f = ids["lgkm-cross-lane"]
    assert "lane-shuffle" in f["message"] and "DPP" in f["hint"]
    assert f["evidence"]["cross_lane_share_of_lgkm"] == 1.0
    assert "lgkm-smem" not in ids


# --- reconstruction rules ----------------------------------------------------------------------


def _rows(isas: list[str]):
    from hotspot.capture.model import CodeRow

    return [CodeRow(n, isa, "", None, 1, 0, 1, 4, 0, 0) for n, isa in enumerate(isas, start=1)]


def _recon(isas: list[str], order: list[int]) -> list[tuple[int, tuple[int, ...]]]:
    tables = build_tables(_rows(isas))
    ins = [[4 * i, 0, 0, 4, line] for i, line in enumerate(order)]
    entries, _positions, _ooo = reconstruct([r[4] for r in ins], tables)
    return entry_keys(ins, entries)


def test_vmcnt_pops_oldest_in_a_loop():
    isas = ["global_load_dword v1, v[2:3], off", "s_waitcnt vmcnt(1)", "s_cbranch_scc1 0"]
    # three iterations: the first wait has 1 outstanding (nothing popped), then each pops the older
    assert _recon(isas, [1, 2, 3, 1, 2, 3, 1, 2]) == [(2, (1,)), (2, (1,))]


def test_flat_counts_on_both_and_lgkm_is_reported_first():
    isas = ["flat_load_dword v1, v[2:3]", "ds_read_b32 v4, v5", "s_waitcnt vmcnt(0) lgkmcnt(0)",
            "s_waitcnt 0"]
    assert _recon(isas, [1, 2, 3]) == [(3, (1, 2)), (3, (1,))]
    # bare `s_waitcnt 0` drains everything
    assert _recon(isas, [1, 2, 4]) == [(4, (1, 2)), (4, (1,))]


def test_stores_and_sendmsg_are_counted():
    isas = ["buffer_store_dword v1, v2, s[0:3], 0 offen", "s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)",
            "s_waitcnt vmcnt(0) lgkmcnt(0)", "v_mov_b32_e32 v0, 0"]
    assert _recon(isas, [1, 4, 2, 3]) == [(3, (2,)), (3, (1,))]


# --- corpus: conservation and agreement ------------------------------------------------------


def _corpus_pass(d: Path):
    disp = open_dispatch(d)
    table = read_code_json(d / "code.json")
    return table, run_wave_pass(disp.wave_files, PassOptions(build_tables(table.rows)))


@pytest.mark.parametrize("rel", DISPATCH_DIRS)
def test_corpus_blame_is_conserved_exactly(corpus, rel):
    d = corpus / rel
    table, part = _corpus_pass(d)
    exact = exact_blame(part.blame)
    per_wait: dict[int, Fraction] = {}
    for (wline, _pline), value in exact.items():
        per_wait[wline] = per_wait.get(wline, Fraction(0)) + value
    assert per_wait == {w: Fraction(s) for w, s in part.blame.wait_stall.items()}
    # and the waits' stall over all waves equals code.json's Stall of the s_waitcnt rows
    doc = json.loads((d / "code.json").read_text())
    code_waits = {r[2]: r[8] for r in doc["code"]
                  if r[0].startswith("s_waitcnt") and r[6] > 0}
    assert part.blame.wait_stall == code_waits


def test_corpus_reconstruction_agrees_with_decoder_edges(corpus):
    total = agreed = waves = 0
    for rel in DISPATCH_DIRS:
        d = corpus / rel
        tables = build_tables(read_code_json(d / "code.json").rows)
        for wf in open_dispatch(d).wave_files:
            w = json.loads(wf.path.read_text())["wave"]
            if not w.get("waitcnt"):
                continue
            waves += 1
            ekeys = edge_keys(w["waitcnt"])
            entries, _pos, _ooo = reconstruct([r[4] for r in w["instructions"]], tables)
            skeys = entry_keys(w["instructions"], entries)
            sm = difflib.SequenceMatcher(None, ekeys, skeys, autojunk=False)
            agreed += sum(b.size for b in sm.get_matching_blocks())
            total += len(ekeys)
    assert waves > 600 and total > 20_000
    agreement = agreed / total
    print(f"reconstruction agreement: {agreed}/{total} edge entries = {agreement:.4%} "
          f"over {waves} waves")
    assert agreement >= 0.95


def test_no_producer_bucket_on_corpus_is_explicit(corpus):
    _table, part = _corpus_pass(corpus / "att/gfx950/preshuffle_gemm_v2")
    bucket = {k: v for k, v in part.blame.blame.items() if k[1] == NO_PRODUCER}
    assert bucket and all(k[2] == 1 for k in bucket)


def test_bundled_synthetic_example_agrees_and_conserves():
    """The bundled example was written by hotspot/synth, whose edges come from its own counter
    model: an independent implementation of the same decoder rule."""
    from hotspot.examples import example_dispatch_dir

    d = example_dispatch_dir()
    table, part = _corpus_pass(d)
    acc = part.blame
    assert acc.waves_edges > 0 and acc.edge_entries_reconstructed == acc.edge_entries
    per_wait: dict[int, Fraction] = {}
    for (wline, _pline), value in exact_blame(acc).items():
        per_wait[wline] = per_wait.get(wline, Fraction(0)) + value
    assert per_wait == {w: Fraction(s) for w, s in acc.wait_stall.items()}
