"""Loops from backward taken branches, on a hand-written two-wave dispatch."""

from __future__ import annotations

from tests.test_wavepass_builder import (
    IMMED,
    JUMP,
    MESSAGE,
    NEXT,
    SALU,
    VALU,
    VMEM,
    Schedule,
    W,
    build_dispatch,
)

PROGRAM = [
    ("s_mov_b32 s0, 0", "/src/k.py:30"),                  # 1
    ("global_load_dword v1, v[2:3], off", "/src/k.py:31"),  # 2  loop header
    ("s_waitcnt vmcnt(0)", "/src/k.py:32"),               # 3
    ("v_add_f32_e32 v0, v0, v1", "/src/k.py:32"),         # 4
    ("s_add_u32 s0, s0, 1", "/src/k.py:33"),              # 5
    ("s_cmp_lt_u32 s0, 3", "/src/k.py:33"),               # 6
    ("s_cbranch_scc1 65530", "/src/k.py:33"),             # 7  back edge
    ("s_endpgm", "/src/k.py:35"),                         # 8
]


def _wave(begin: int, trips: int, wait: int) -> list[list[int]]:
    s = Schedule(begin).op(1, SALU)
    for i in range(trips):
        s.op(2, VMEM).op(3, IMMED, stall=wait).op(4, VALU).op(5, SALU).op(6, SALU)
        s.op(7, JUMP if i < trips - 1 else NEXT)
    return s.op(8, MESSAGE).records


def test_loop_iterations_stall_and_hot_wait(cli, tmp_path):
    d = build_dispatch(tmp_path / "d", PROGRAM, [W(_wave(0, 3, 40), 0, simd=0),
                                                 W(_wave(0, 2, 60), 0, simd=1)])
    data = cli("analyze", d, "--format", "json", "--topk", "0").json()["data"]
    (lp,) = data["loops"]
    assert (lp["first_line_number"], lp["last_line_number"]) == (2, 7)
    assert lp["source_range"] == "/src/k.py:31-33"
    assert lp["iterations"] == 5 and lp["back_edges"] == 3 and lp["waves"] == 2
    assert lp["iterations_per_wave"] == 2.5
    assert lp["stall"] == 3 * 40 + 2 * 60 and lp["share"] == 1.0
    hot = lp["hot_wait"]
    assert hot["line_number"] == 3 and hot["stall"] == 240 and hot["share_of_loop"] == 1.0
    assert hot["top_producer"] == "#2 global_load_dword v1, v[2:3], off"
    assert hot["top_producer_share"] == 1.0
    # each wait pops the load of its own iteration, issued just before it
    (w,) = data["waits"]
    assert w["producers"][0]["median_distance_cycles"] == 4
    assert w["producers"][0]["median_distance_instructions"] == 0
    assert w["producers"][0]["instances"] == 5


def test_forward_taken_branch_is_not_a_loop(cli, tmp_path):
    program = [("s_cbranch_execz 2", "/src/k.py:1"), ("v_mov_b32_e32 v0, 0", "/src/k.py:2"),
               ("s_endpgm", "/src/k.py:3")]
    recs = Schedule(0).op(1, JUMP).op(3, MESSAGE).records
    d = build_dispatch(tmp_path / "d", program, [W(recs, 0)])
    data = cli("analyze", d, "--format", "json").json()["data"]
    assert data["loops"] == []


def test_loops_in_code_and_loops_taken_answer_different_questions():
    """Every backward branch in the ISA (known before the waves are read) against the loops the
    waves took: a backward branch no wave took is in the first and not in the second."""
    from hotspot.att.loops import loops_in_code, loops_taken
    from hotspot.capture import CodeRow

    isa = [i for i, _ in PROGRAM[:-1]] + ["s_cbranch_execz 65534", "s_endpgm"]  # #8 -> #7, never taken
    rows = [CodeRow(n, text, "", None, 1, 4 * (n - 1), 0, 0, 0, 0) for n, text in enumerate(isa, 1)]
    # #7 at 0x18: 65530 = -6 dwords from the next instruction (0x1c) = 0x4 = #2; #8 at 0x1c: -2 -> 0x18 = #7
    assert loops_in_code(rows) == [(2, 7), (7, 8)]
    per_line = {n: [3 if 2 <= n <= 7 else 1, 0, 10] for n in range(1, 10)}
    taken = loops_taken({(7, 2): [2, 1]}, rows, per_line, [], 90)
    assert [(lp.first_line_number, lp.last_line_number, lp.back_edges) for lp in taken] == [(2, 7, 2)]
    assert taken[0].stall == 60 and taken[0].iterations == 3
