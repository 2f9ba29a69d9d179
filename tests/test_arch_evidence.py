"""The arch from the capture itself when no side file names it (issue 33, point 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hotspot.arch.decide import CAPTURE, ArchHint, SIDE_FILE, decide
from hotspot.capture.arch_evidence import capture_hint, family_evidence, name_tag_hint
from hotspot.capture.target import detect_arch

SPILL = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "att" / "gfx942" / \
    "hipkittens_gemm_spill" / "ui_output_agent_18224_dispatch_48"


def test_name_tag_names_the_target() -> None:
    hint = name_tag_hint("Cijk_Alik_Bljk_BBS_BH_MT256x256x64_ISA942_SK3_WG16_8_1")
    assert hint is not None and hint.name == "gfx942" and hint.kind == CAPTURE
    assert name_tag_hint("Cijk_ISA1100_x") is None  # no table for it: say nothing
    assert name_tag_hint("visa942_kernel") is None


def test_family_alone_does_not_decide_between_gfx942_and_gfx950() -> None:
    isa = ["v_lshl_add_u64 v[0:1], v[2:3], 0, v[4:5]"]
    assert family_evidence(isa) is not None
    assert capture_hint("k", isa, {}) is None  # no layout: both candidates stay
    # 8 busy CUs on an SE fit both targets: still undecided
    assert capture_hint("k", isa, {0: list(range(8))}) is None
    hint = capture_hint("k", isa, {0: [0, 1, 2, 3, 4, 5, 6, 7, 8], 1: [0]})
    assert hint is not None and hint.name == "gfx942" and "9 distinct busy CUs" in hint.source


def test_layout_alone_never_decides() -> None:
    # 9 CUs on an SE without a gfx940+ instruction: gfx90a/gfx908 remain possible
    assert capture_hint("k", ["v_add_f32 v0, v1, v2"], {0: list(range(12))}) is None
    assert family_evidence(["global_load_dwordx4 v[0:3], v[4:5], off"]) is None
    assert family_evidence(["global_load_dwordx4 v[0:3], v[4:5], off sc0 sc1"]) is not None


def test_side_file_of_this_run_wins_over_the_capture() -> None:
    arch = decide([ArchHint("gfx942", "capture: x", CAPTURE), ArchHint("gfx950", "agent_info: a", SIDE_FILE)])
    assert arch.gfx == "gfx950"


@pytest.mark.skipif(not SPILL.is_dir(), reason="corpus absent")
def test_spill_capture_is_gfx942_from_its_own_evidence() -> None:
    import json

    rows = json.loads((SPILL / "code.json").read_text())["code"]
    isa = [r[0] for r in rows if r[6] > 0 and not str(r[0]).startswith(";")]
    arch = detect_arch(SPILL, isa, kernel="_Z8micro_tk13micro_globals")
    assert arch.gfx == "gfx942"
    assert arch.source.startswith("capture:")
