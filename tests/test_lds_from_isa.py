"""LDS from the ISA (issue 24, point 3): when the kernel trace reports 0 or no LDS (dynamic LDS is
not in `LDS_Block_Size`), the highest constant LDS reach of the ISA is a lower bound that feeds the
occupancy model, with the row that sets it as evidence."""

from __future__ import annotations

import re

import pytest

from hotspot.att.lds_bound import lds_lower_bound
from hotspot.att.model import AnalyzeOptions
from hotspot.plan.entry_point import analyze
from hotspot.capture.model import CodeRow
from tests.conftest import corpus_path

# The same corpus captures are analyzed by several tests and commands here: their wave pass is
# made once per test process (tests/conftest.py shared_analyses).
pytestmark = pytest.mark.usefixtures("shared_analyses")


def rows(*isa: str) -> list[CodeRow]:
    return [CodeRow(n, text, "", None, 0, 0, 1, 1, 0, 0) for n, text in enumerate(isa, 1)]


def test_the_highest_offset_plus_width_bounds_lds() -> None:
    got = lds_lower_bound(rows("ds_write_b128 v1, v[2:5] offset:4096",
                               "ds_read_b64 v[2:3], v1 offset:8192",     # 8192 + 8 = 8200
                               "ds_read_u16 v2, v1 offset:8190",         # 8192
                               "ds_bpermute_b32 v2, v1, v3 offset:60000",  # a shuffle: no LDS
                               "s_endpgm"))
    assert got is not None and (got.bytes, got.line_number, got.offset, got.width) == (8200, 2, 8192, 8)


def test_paired_forms_scale_their_offsets() -> None:
    # ds_read2_b32 offsets are in dwords; the st64 forms in 64 dwords
    assert lds_lower_bound(rows("ds_read2_b32 v[0:1], v2 offset0:3 offset1:100")).bytes == 100 * 4 + 4
    assert lds_lower_bound(rows("ds_write2st64_b64 v2, v[0:1], v[4:5] offset1:2")).bytes == 2 * 8 * 64 + 8


def test_lds_dma_with_a_literal_m0() -> None:
    got = lds_lower_bound(rows("s_mov_b32 m0, 0x3000", "buffer_load_dword v1, s[4:7], 0 offen offset:64 lds"))
    assert got is not None and got.bytes == 0x3000 + 64 + 4 and "LDS-DMA" in got.basis
    # M0 from a register: unknown, no bound
    assert lds_lower_bound(rows("s_mov_b32 m0, s3", "buffer_load_dword v1, s[4:7], 0 offen lds")) is None


def _isa_reach(code_json) -> int:
    """Max constant offset + width of the plain single-address ds_read/ds_write rows, by hand."""
    import json

    best = 0
    for row in json.loads(code_json.read_text())["code"]:
        m = re.match(r"ds_(read|write)_b(\d+) .*offset:(\d+)$", row[0])
        if m:
            best = max(best, int(m.group(3)) + int(m.group(2)) // 8)
    return best


@pytest.mark.parametrize("name, trace_lds", [("preshuffle_gemm_v2", 0), ("blockscale_preshuffle_gemm", 8192),
                                             ("mla_decode", 84992)])
def test_corpus_lds_is_at_least_the_isa_reach(corpus, name: str, trace_lds: int) -> None:
    d = corpus_path("att", "gfx950", name)
    result = analyze(d, AnalyzeOptions(topk=0))
    res = result.data.occupancy.resources
    reach = _isa_reach(d / "code.json")
    assert res is not None and res.lds_isa is not None
    assert res.lds_isa.bytes >= reach > 0 and res.lds_isa.lower_bound is True
    assert res.lds == max(trace_lds, res.lds_isa.bytes)
    raised = [w for w in result.warnings if "lower bound from the ISA" in w]
    if trace_lds < reach:  # preshuffle_gemm_v2: the trace's 0 is dynamic LDS, ~14 KB from the ISA
        assert res.lds == reach == 14352 and res.source["lds_bytes"].startswith("isa")
        assert raised and f"#{res.lds_isa.line_number}" in raised[0]
    else:
        assert not raised and res.source["lds_bytes"].startswith("kernel_trace")


def test_gds_accesses_are_not_lds() -> None:
    assert lds_lower_bound(rows("ds_add_u32 v1, v2 offset:4096 gds")) is None
