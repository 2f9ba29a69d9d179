"""from_plain: plain JSON back into the typed records, checked by the round trip (the typed value
written again is byte-identical to what analyze wrote) and by errors that name the field."""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hotspot.plan.entry_point import analyze
from hotspot.att.model import AnalyzeOptions, DispatchAnalysis
from hotspot.errors import InputError
from hotspot.plan.model import SkipStatus
from hotspot.record import record
from hotspot.decode import from_plain
from hotspot.result import JsonObject, dumps, plain

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "hotspot/examples/data/example_run/ui_output_agent_5600_dispatch_1"
CORPUS = ROOT.parent / "shared" / "corpus"


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


@record
class Leaf:
    name: str
    weight: float
    tags: tuple[str, ...] = ()


@record
class Tree:
    leaves: list[Leaf]
    colour: Colour
    extra: JsonObject = field(default_factory=dict)
    parent: Tree | None = None
    pair: tuple[int, str] | None = None
    by_name: dict[str, int] = field(default_factory=dict)


def _dirs() -> list[Path]:
    found = sorted((CORPUS / "att").glob("**/ui_output_agent_*")) if CORPUS.is_dir() else []
    return [EXAMPLE] + found[:4]


@pytest.mark.parametrize("path", _dirs(), ids=lambda p: p.name)
def test_a_saved_analysis_reads_back_as_the_typed_value_it_was(path: Path) -> None:
    typed = analyze(path, AnalyzeOptions()).data
    assert isinstance(typed, DispatchAnalysis)
    back = from_plain(DispatchAnalysis, plain(typed))
    assert isinstance(back, DispatchAnalysis)
    assert type(back.instructions[0]) is type(typed.instructions[0])
    assert dumps(back) == dumps(typed)


def test_nested_records_enums_tuples_and_defaults() -> None:
    doc = {"leaves": [{"name": "a", "weight": 1}, {"name": "b", "weight": 2.5, "tags": ["x"]}],
           "colour": "blue", "parent": {"leaves": [], "colour": "red"}, "pair": [3, "z"],
           "unknown": 1}
    tree = from_plain(Tree, doc)
    assert tree.leaves[1] == Leaf("b", 2.5, ("x",))
    assert tree.colour is Colour.BLUE and tree.parent is not None and tree.parent.colour is Colour.RED
    assert tree.pair == (3, "z") and tree.extra == {} and tree.by_name == {}
    # an int in a float field stays the int it was written as (JSON does not tell them apart)
    assert type(tree.leaves[0].weight) is int


@pytest.mark.parametrize("doc, message", [
    ({"leaves": [{"name": "a", "weight": "x"}], "colour": "red"}, "field 'leaves[0].weight' is not a number"),
    ({"leaves": [], "colour": "green"}, "field 'colour' is not one of 'red', 'blue'"),
    ({"leaves": [{"weight": 1}], "colour": "red"}, "field 'leaves[0].name' is missing"),
    ({"leaves": {}, "colour": "red"}, "field 'leaves' is not a list"),
    ({"leaves": [], "colour": "red", "pair": [1]}, "field 'pair' is not a list of 2"),
    ({"leaves": [], "colour": "red", "by_name": {"a": True}}, "field 'by_name.a' is not an integer"),
    ([], "field '(document)' is not an object"),
])
def test_a_wrong_value_names_the_file_and_the_field(doc: object, message: str) -> None:
    with pytest.raises(InputError) as err:
        from_plain(Tree, doc, source="saved.json")
    assert str(err.value) == f"saved.json: {message}"


@given(st.lists(st.tuples(st.text(), st.floats(allow_nan=False, allow_infinity=False), st.lists(st.text(), max_size=3)),
                max_size=5))
def test_round_trip_of_written_records(rows: list[tuple[str, float, list[str]]]) -> None:
    tree = Tree([Leaf(n, w, tuple(t)) for n, w, t in rows], Colour.RED, by_name={"k": len(rows)})
    assert from_plain(Tree, plain(tree)) == tree


def test_the_options_echo_reads_through_typed_accessors() -> None:
    """The echo keeps the command line's keys (its JSON is unchanged); the views, the plan's
    trust and diff read it through typed accessors."""
    typed = analyze(EXAMPLE, AnalyzeOptions(detail=True, mode="src", max_waves=7, topk=3)).data
    assert typed.options is not None
    assert (typed.options.detail, typed.options.mode, typed.options.max_waves) == (True, "src", 7)
    assert plain(typed.options) == {"topk": 3, "mode": "src", "detail": True, "context": 3, "kernel": None,
                                    "max_waves": 7}
    assert (typed.asked_detail, typed.asked_tables, typed.asked_max_waves, typed.asked_topk) == (True, "src", 7, 3)
    back = from_plain(DispatchAnalysis, plain(typed))
    assert (back.asked_detail, back.asked_tables, back.asked_max_waves) == (True, "src", 7)
    bare = from_plain(DispatchAnalysis, {**plain(typed), "options": {"topk": 0, "mode": "asm"}})
    assert (bare.asked_detail, bare.asked_tables, bare.asked_max_waves, bare.asked_topk) == (False, "asm", None, 0)


@record(frozen=False)
class Late:
    size: int
    # written only once set (an init=False field with a plain default is not in __dict__ before)
    note: Leaf | None = field(default=None, init=False)


def test_an_init_false_field_is_written_only_when_set_and_reads_back() -> None:
    bare = Late(3)
    assert dumps(bare) == b'{"size":3}'
    assert from_plain(Late, {"size": 3}).note is None
    noted = Late(4)
    noted.note = Leaf("n", 1.5)
    assert dumps(noted) == b'{"size":4,"note":{"name":"n","weight":1.5,"tags":[]}}'
    back = from_plain(Late, plain(noted))
    assert back.note == Leaf("n", 1.5) and dumps(back) == dumps(noted)


def test_occupancy_resources_keep_their_json_with_and_without_the_isa_lds_floor() -> None:
    from hotspot.att.dispatch_occupancy import IsaLds, KernelResources

    res = KernelResources(64, 0, 32, 0, 256, True, {"vgpr": "isa"})
    assert dumps(res) == (b'{"vgpr":64,"agpr":0,"sgpr":32,"lds":0,"wg":256,"sgpr_includes_implicit":true,'
                          b'"source":{"vgpr":"isa"}}')
    res.lds_isa = IsaLds(4096, 12, "ds_write_b32 v1, v2 offset:4092", 4092, 4, "ds offset + width")
    text = dumps(res)
    assert text.endswith(b'"lds_isa":{"bytes":4096,"line_number":12,"isa":"ds_write_b32 v1, v2 offset:4092",'
                         b'"offset":4092,"width":4,"basis":"ds offset + width","lower_bound":true}}')
    assert dumps(from_plain(KernelResources, plain(res))) == text


def test_text_enum_states_are_their_strings_in_json_text_and_decoding() -> None:
    from hotspot.att.model import AnalysisMode, PlanMode
    from hotspot.plan.model import SkipStatus
    from hotspot.sweep_records import EntryStatus

    assert dumps({"mode": AnalysisMode.PC_SAMPLING, "s": [EntryStatus.TIMED_OUT]}) == \
        b'{"mode":"pc-sampling","s":["timed-out"]}'
    assert f"{AnalysisMode.CYCLES} capture" == "cycles capture" and str(SkipStatus.BELOW_GUARD) == "below-guard"
    assert PlanMode.NONE == "" and EntryStatus("done") is EntryStatus.DONE
    assert from_plain(Skip, {"status": "capped"}).status is SkipStatus.CAPPED
    with pytest.raises(InputError, match="field 'status' is not one of 'missing-input', 'not-triggered'"):
        from_plain(Skip, {"status": "nope"})


@record
class Skip:
    status: SkipStatus


@record
class Short:
    x: int


@record
class Long:
    x: int
    y: int


@record
class Holder:
    one: Short | Long
    maybe: Short | Long | None = None


def test_a_union_of_records_reads_as_the_member_whose_fields_are_the_keys() -> None:
    """A record ignores unknown keys, so {"x", "y"} would also read as Short; the exact key set
    picks Long whichever comes first in the union."""
    held = from_plain(Holder, {"one": {"x": 1, "y": 2}, "maybe": {"x": 3}})
    assert held.one == Long(1, 2) and held.maybe == Short(3)
    assert from_plain(Holder, {"one": {"x": 1}, "maybe": None}).maybe is None
    with pytest.raises(InputError) as err:
        from_plain(Holder, {"one": {"x": 1, "z": 2}}, source="saved.json")
    assert str(err.value) == ("saved.json: field 'one' is not an object with the fields of one of "
                              "Short, Long")


def _evidence_kinds() -> list[type]:
    import typing

    from hotspot.att.findings import FindingEvidence
    from hotspot.att.representativeness import ReasonEvidence

    return [*typing.get_args(FindingEvidence), *typing.get_args(ReasonEvidence)]


def test_every_kind_of_evidence_has_its_own_set_of_fields() -> None:
    """What reading a saved finding's or reason's evidence relies on (the test above)."""
    import dataclasses
    import typing

    from hotspot.att.findings import FindingEvidence
    from hotspot.att.representativeness import ReasonEvidence

    for union in (FindingEvidence, ReasonEvidence):
        keys = [frozenset(f.name for f in dataclasses.fields(k)) for k in typing.get_args(union)]
        assert len(set(keys)) == len(keys), union


def test_findings_and_reasons_of_every_kind_read_back_as_written() -> None:
    from hotspot.att import findings as fnd
    from hotspot.att import representativeness as rep

    evidences = [
        fnd.SourceCollapseEvidence("k.py", 3, 0.8, ["lds", "valu", "salu"], 0.5, 3,
                                   [fnd.NextLine("k.py", 9, 0.1, "valu")]),
        fnd.NoSourceEvidence(100, 10, 0.1, 0.5),
        fnd.IdleSliceEvidence(5000, 17, 0.0034, 0.05),
        fnd.RebuiltColumnsEvidence("early-3.0.0", ["Stall", "Idle"], 8),
        fnd.WaveMismatchEvidence({"stall": fnd.TotalPair(10, 20)}, 2, [4, 7], 8),
        fnd.LgkmCrossLaneEvidence(0.7, 700.0, 1000.0, 0.2, ["ds_bpermute_b32"], 0.5, 0.05),
        fnd.LgkmSmemEvidence(0.6, 600.0, 1000.0, 0.1, True, ["s_load_dwordx2"], 0.5, 0.05),
        fnd.OccupancyGapEvidence(8, 2.5, 4, 0.3125, 0.5),
    ]
    findings = [fnd.Finding(f"kind-{i}", "info", "m", ev, "h") for i, ev in enumerate(evidences)]
    reasons = [rep.Reason(f"kind-{i}", "note", "m", "", ev) for i, ev in enumerate([
        rep.RuntimeKernelEvidence("__amd_rocclr_fillBuffer"),
        fnd.IdleSliceEvidence(5000, 17, 0.0034, 0.05),
        rep.WaveMismatchReasonEvidence({"hit": fnd.TotalPair(1, 3000)}, 1, [2], 4, 3000.0, 2.0),
        rep.EarlyExitEvidence(12, 16, 0.75, [5, 6], 4000, 64, 0.1, 0.25),
        rep.PreloadEntryEvidence(1, 65, 256),
        rep.MissingStartEvidence(1, 40, 90, 120),
        rep.SteadySampleEvidence(8, 2, 16.0, 8.0),
        rep.SmallSampleEvidence(4, None, None, 16, 2),
        rep.SinglePassEvidence(1.0, 2.0),
        rep.LineShareEvidence(0.9),
    ])]
    assert {type(f.evidence) for f in findings} | {type(r.evidence) for r in reasons} == set(_evidence_kinds())
    assert from_plain(list[fnd.Finding], plain(findings)) == findings
    assert from_plain(list[rep.Reason], plain(reasons)) == reasons
    # the JSON is the evidence's fields in their order, as the dicts were written before
    assert plain(findings[4])["evidence"] == {"totals": {"stall": {"code_json": 10, "wave_files": 20}},
                                              "rows_differing": 2, "first_rows": [4, 7], "waves_read": 8}
