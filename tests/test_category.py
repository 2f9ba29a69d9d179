"""The stall taxonomy as one enum and a row's source as one typed value: both written as the strings
the JSON has always had, both failing loudly when wrong."""

from __future__ import annotations

import pickle

import orjson
import pytest

from hotspot.arch.classify import CATEGORIES, MEMORY_CATEGORIES, WAIT_CATEGORIES, Category, classify
from hotspot.capture.source import NO_SOURCE, SourceRef, parse_source
from hotspot.errors import InputError
from hotspot.result import dumps, plain
from hotspot.synth.isa import classify as synth_classify
from tests.plan_data import analysis


def test_category_is_written_as_its_id_and_equals_it() -> None:
    c = classify("s_waitcnt vmcnt(0)").category
    assert c is Category.WAIT_VMCNT and c == "wait-vmcnt" and f"{c}" == "wait-vmcnt" and str(c) == "wait-vmcnt"
    assert orjson.loads(dumps({"category": c, c: 1})) == {"category": "wait-vmcnt", "wait-vmcnt": 1}
    assert CATEGORIES == tuple(m.value for m in Category)
    assert WAIT_CATEGORIES <= set(Category) and MEMORY_CATEGORIES <= set(Category)


def test_a_misspelt_category_fails_at_the_boundary() -> None:
    row = {"line_number": 1, "isa": "s_waitcnt vmcnt(0)", "category": "wait-vmcount"}
    with pytest.raises(InputError, match="instructions\\[0\\].category"):
        analysis({"instructions": [row]})
    with pytest.raises(ValueError):
        Category("vmem_load")


def test_synth_classifies_with_the_analysis_classifier() -> None:
    # the generator's kinds follow the one classifier: a cross-lane op is a bperm, a scratch store a store
    assert synth_classify("ds_bpermute_b32 v1, v2, v3", "gfx950").kind == "bperm"
    assert synth_classify("scratch_store_dword v1, v2, off", "gfx950").kind == "vmem_store"
    assert synth_classify("s_waitcnt vmcnt(0)", "gfx950").kind == "waitcnt"
    assert synth_classify("s_endpgm", "gfx950").kind == "endpgm"


@pytest.mark.parametrize("text", ["/k/kernel.py:64", "a.h:?", "C:\\k\\x.cpp:7", "weird:name", ""])
def test_source_ref_is_its_label_and_its_parts(text: str) -> None:
    ref = SourceRef.from_text(text)
    loc = parse_source(text)
    assert (ref.file, ref.line) == ((loc.file, loc.line) if loc else (None, None))
    assert ref == (loc.label if loc else "") and orjson.loads(dumps([ref])) == [str(ref)]
    back = pickle.loads(pickle.dumps(ref))
    assert (back, back.file, back.line) == (ref, ref.file, ref.line)


def test_rows_carry_the_typed_source_and_plain_keeps_the_string() -> None:
    a = analysis({"instructions": [{"line_number": 3, "isa": "v_add_f32 v0, v1, v2", "category": "valu",
                                    "source": "/k/kernel.py:28"}, {"line_number": 4, "isa": "s_endpgm"}]})
    src = a.instructions[0].source
    assert (src.file, src.line) == ("/k/kernel.py", 28)
    assert a.instructions[1].source is NO_SOURCE or a.instructions[1].source == ""
    rows = plain(a.instructions)
    assert [r["source"] for r in rows] == ["/k/kernel.py:28", ""]
    assert all(type(r["source"]) is str and type(r["category"]) is str for r in rows)
