"""read_analysis: a saved `analyze --format json` output read back as the typed analysis diff and
report take. Checked by the round trip (the typed value written again is what analyze wrote, and
the page rendered from it is the page of the live analysis) and by one-line errors naming the file
and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hotspot.att.load import read_analysis
from hotspot.att.model import DispatchAnalysis, MultiAnalysis
from hotspot.errors import InputError
from hotspot.examples import example_dispatch_dir
from hotspot.result import dumps
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, dict]:
    """The example's `analyze --plan --detail --topk 0 --format json` output, and its document."""
    run = run_cli("analyze", example_dispatch_dir(), "--plan", "--detail", "--topk", "0",
                  "--format", "json")
    assert run.exit_code == 0, run.stderr
    path = tmp_path_factory.mktemp("saved") / "a.json"
    path.write_text(run.stdout)
    return path, json.loads(run.stdout)


def test_a_saved_analysis_reads_back_as_what_analyze_wrote(saved):
    path, doc = saved
    a, warnings = read_analysis(path)
    assert isinstance(a, DispatchAnalysis)
    assert a.dispatch.kernel == doc["data"]["dispatch"]["kernel"]
    again = json.loads(dumps(a))
    # every field of the analysis comes back as written (the plan's own fields are the plan's)
    assert {k: v for k, v in doc["data"].items() if k in again} == again
    assert a.detail and a.detail[0].snippet[0].line == doc["data"]["detail"][0]["snippet"][0]["line"]
    assert warnings == doc["warnings"]


def test_the_page_of_a_saved_analysis_is_the_page_of_the_live_one(saved):
    """report SAVED.json renders the same page as analyze --format html of the same analysis."""
    from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
    from hotspot.export.report_data import report_data
    from hotspot.plan.entry_point import analyze
    from hotspot.render.html import render_page

    path, _ = saved
    live = analyze(example_dispatch_dir(), AnalyzeOptions(topk=0, detail=True, plan=PLAN_ATTACHED))
    from_file = report_data(path)
    # the file's page says once what a saved analysis lacks (the full listing, the wave timelines)
    lacks = [w for w in from_file.warnings if w not in live.warnings]
    assert len(lacks) == 1 and lacks[0].startswith(f"{path}: a saved analysis holds") and "timelines" in lacks[0]
    page = render_page(live.data, [*live.warnings, *lacks])
    assert '<ol class="plan">' in page and "<pre class=\"snippet\">" in page
    assert render_page(from_file.data, from_file.warnings) == page


def test_a_bare_data_object_and_an_all_dispatches_output_read(saved, tmp_path):
    path, doc = saved
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc["data"]))
    assert read_analysis(bare)[0].dispatch.path == doc["data"]["dispatch"]["path"]
    many = tmp_path / "many.json"
    many.write_text(json.dumps(dict(doc, data={"dispatches": [doc["data"]], "ranking": []})))
    m, _ = read_analysis(many)
    assert isinstance(m, MultiAnalysis) and len(m.dispatches) == 1


@pytest.mark.parametrize("change,says", [
    (lambda d: d.__setitem__("command", "pmc"), "field 'command' is 'pmc', expected 'analyze'"),
    (lambda d: d.__setitem__("ok", False), "holds an error envelope"),
    (lambda d: d.__setitem__("schema_version", 99), "field 'schema_version' is '99'"),
    (lambda d: d["data"].pop("dispatch"), "field 'data.dispatch' is missing"),
    (lambda d: d["data"]["totals"].__setitem__("stall", "many"), "field 'data.totals.stall' is not an integer"),
    (lambda d: d["data"]["instructions"][0].pop("isa"), "field 'data.instructions[0].isa' is missing"),
    (lambda d: d.__setitem__("data", {"dispatches": [], "ranking": []}), "field 'data.dispatches' is empty"),
])
def test_a_wrong_file_is_one_line_naming_the_file_and_field(saved, tmp_path, change, says):
    _, doc = saved
    doc = json.loads(json.dumps(doc))
    change(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        read_analysis(bad)
    assert str(err.value).startswith(f"{bad}: ") and says in str(err.value)
    assert "\n" not in str(err.value) and err.value.exit_code == 3


def test_not_json_and_not_an_object_are_named(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b"{")
    with pytest.raises(InputError, match="x.json: malformed JSON"):
        read_analysis(path)
    # a file that does not begin as a JSON object is no saved analysis at all (a CSV, a list, a log)
    for text in (b"[1, 2]", b"Dispatch_ID,Kernel_Name\n1,k\n", b"\x7fELF\x02"):
        path.write_bytes(text)
        with pytest.raises(InputError, match="x.json: neither a capture directory nor a saved `hotspot "
                                             "analyze --format json` file") as err:
            read_analysis(path)
        assert "malformed" not in str(err.value) and err.value.exit_code == 3
