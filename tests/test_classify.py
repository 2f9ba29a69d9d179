"""The stall taxonomy: mnemonic-token matching, and full coverage of the corpus mnemonics."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hotspot.arch.classify import CATEGORIES, DELIBERATELY_OTHER, classify, mnemonic_of

DOC = Path(__file__).resolve().parents[1] / "docs" / "stall-taxonomy.md"


@pytest.mark.parametrize("isa,category", [
    ("s_buffer_load_dword s4, s[0:3], 0x10", "smem"),          # predecessor said VMEM-load
    ("s_load_dwordx2 s[4:5], s[0:1], 0x0", "smem"),
    ("s_waitcnt vmcnt(0) lgkmcnt(0)", "wait-mixed"),            # predecessor said VMEM-wait only
    ("s_waitcnt vmcnt(3)", "wait-vmcnt"),
    ("s_waitcnt lgkmcnt(0)", "wait-lgkmcnt"),
    ("s_waitcnt expcnt(0)", "wait-expcnt"),
    ("s_waitcnt 0", "wait-mixed"),
    ("ds_load_b128 v[0:3], v4", "lds"),
    ("ds_store_b32 v1, v2", "lds"),
    ("ds_add_u32 v1, v2", "lds"),
    ("ds_read_b64_tr_b16 v[0:1], v2", "lds"),
    ("ds_bpermute_b32 v1, v2, v3", "cross-lane"),
    ("ds_swizzle_b32 v1, v2 offset:swizzle(SWAP,16)", "cross-lane"),
    ("ds_permute_b32 v1, v2, v3", "cross-lane"),
    ("scratch_load_dword v1, off, s0", "scratch"),
    ("scratch_store_dword off, v1, s0", "scratch"),
    ("flat_store_dword v[0:1], v2", "flat"),
    ("flat_load_dword v1, v[2:3]", "flat"),
    ("global_atomic_add_f32 v0, v1, s[0:1]", "vmem-atomic"),
    ("buffer_atomic_add v1, v2, s[0:3], 0 offen", "vmem-atomic"),
    ("buffer_store_dwordx4 v[0:3], v8, s[12:15], 0 offen", "vmem-store"),
    ("global_load_dwordx4 v[0:3], v4, s[0:1]", "vmem-load"),
    ("v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]", "mfma"),
    ("v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10", "mfma"),
    ("v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]", "valu"),
    ("v_dot2_f32_f16 v0, v1, v2, v3", "valu"),
    ("v_accvgpr_read_b32 v0, a0", "valu"),
    ("s_nop 4", "nop"),
    ("s_sleep 1", "nop"),
    ("s_barrier", "barrier"),
    ("s_cbranch_scc1 65", "branch"),
    ("s_branch 12", "branch"),
    ("s_endpgm", "message"),
    ("s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)", "message"),
    ("s_mov_b32 s0, s1", "salu"),
    ("S_MOV_B32 s0, s1", "salu"),
])
def test_classify(isa, category):
    assert classify(isa).category == category


def test_token_not_substring():
    # "lds" or "load" inside operands must not change the class
    assert classify("v_mov_b32 v0, s_load_marker").category == "valu"
    assert classify("s_mov_b32 s0, vmcnt").category == "salu"


def test_direct_to_lds_flag():
    assert classify("buffer_load_dword v1, s[4:7], 0 offen lds").direct_to_lds
    assert classify("global_load_lds_dwordx4 v1, s[0:1]").direct_to_lds
    assert not classify("buffer_load_dword v1, s[4:7], 0 offen").direct_to_lds


def test_wait_counters_parsed():
    assert classify("s_waitcnt vmcnt(2) lgkmcnt(1)").wait_counters == (("vmcnt", 2), ("lgkmcnt", 1))


def _corpus_mnemonics(root: Path) -> set[str]:
    seen: set[str] = set()
    for f in root.glob("att/**/code.json"):
        doc = json.loads(f.read_text())
        for row in doc.get("code") or []:
            if isinstance(row[0], str) and not row[0].startswith(";"):
                seen.add(mnemonic_of(row[0]))
    for f in root.glob("csv/**/*instruction*stats*.csv"):
        with f.open(newline="") as fh:
            reader = csv.DictReader(fh)
            col = next(c for c in reader.fieldnames if c.lower() == "instruction")
            for row in reader:
                if not row[col].startswith(";"):  # kernel-symbol pseudo rows
                    seen.add(mnemonic_of(row[col]))
    seen.discard("")
    return seen


def test_every_corpus_mnemonic_is_classified(corpus):
    mnemonics = _corpus_mnemonics(corpus)
    assert len(mnemonics) > 150  # the corpus really was read
    unclassified = sorted(m for m in mnemonics
                          if classify(m).category == "other" and m not in DELIBERATELY_OTHER)
    assert unclassified == []


def test_taxonomy_doc_lists_every_category_and_deliberate_other():
    text = DOC.read_text()
    for cat in CATEGORIES:
        assert f"| `{cat}` |" in text, cat
    for m in DELIBERATELY_OTHER:
        assert re.search(rf"`{re.escape(m)}`", text), m


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ_9 \t,\n.[]:\u00a0\u2003x")), max_size=24))
def test_mnemonic_is_the_text_up_to_the_first_whitespace_or_comma(isa):
    """The mnemonic of an instruction's text, by its definition: stripped, cut at the first
    whitespace (any str.isspace character, a no-break space too) or comma, lower case."""
    text = isa.strip()
    cuts = [i for i, ch in enumerate(text) if ch.isspace() or ch == ","]
    assert mnemonic_of(isa) == text[:cuts[0] if cuts else len(text)].lower()


def test_classes_by_mnemonic_are_those_of_the_prefix_table_whatever_the_operands():
    """Instructions of one mnemonic get the same class whatever their operands (the class is
    looked up once per mnemonic)."""
    for ops in ("v[0:3], v4", "v1, v2 offset:16", ""):
        assert classify(f"global_load_dwordx4 {ops}".strip()).category == "vmem-load"
        assert classify(f"V_MFMA_F32_32X32X8_F16 {ops}".strip()).category == "mfma"


@pytest.mark.parametrize("isa, mnemonic", [
    ("s_waitcnt vmcnt(0) lgkmcnt(0)", "s_waitcnt"),
    ("  V_MFMA_F32_32X32X8_F16 a[0:15], v[0:1], v[2:3], a[0:15]", "v_mfma_f32_32x32x8_f16"),
    ("global_load_dwordx4\tv[0:3], v[4:5], off", "global_load_dwordx4"),
    ("v_add_f32,v0,v1,v2", "v_add_f32"),   # a comma ends the mnemonic as a space does
    ("s_endpgm", "s_endpgm"),
    ("", ""),
    ("   \t ", ""),                          # a blank line has no mnemonic (no IndexError)
])
def test_mnemonic_of_is_the_first_token_in_lower_case(isa: str, mnemonic: str) -> None:
    assert mnemonic_of(isa) == mnemonic
