"""`--format csv` (docs/csv.md): one table per section, raw values as in JSON; one section asked
is a plain CSV table; several are blocks, each a `# section: NAME` line, a header and its rows,
separated by an empty line (issue 38, point 5)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from hotspot.commands.analyze import SPEC as ANALYZE
from hotspot.commands.pmc import SPEC as PMC_SPEC

PMC = Path(__file__).parent / "fixtures" / "pmc" / "l2.csv"


def _blocks(text: str) -> dict[str, list[dict[str, str]]]:
    """The sections of a many-table CSV, read by the documented layout only."""
    out: dict[str, list[dict[str, str]]] = {}
    for block in text.rstrip("\n").split("\n\n# section: "):
        name, _, body = block.removeprefix("# section: ").partition("\n")
        assert name not in out
        out[name] = list(csv.DictReader(io.StringIO(body)))
    return out


def _ok(cli, *argv: str) -> str:
    r = cli("--no-cache", *argv)
    assert r.exit_code == 0, r.stderr
    return r.stdout


def test_analyze_csv_holds_every_row_of_the_json(cli) -> None:
    data = cli("--no-cache", "analyze", "--example", "--format", "json").json()["data"]
    blocks = _blocks(_ok(cli, "analyze", "--example", "--format", "csv"))
    # the sections of the text view, in the spec's order (no plan without --plan)
    assert list(blocks) == [n for n in ANALYZE.sections if n in blocks] and "plan" not in blocks
    assert {"verdict", "summary", "stall", "lines", "instructions", "waits", "findings"} <= set(blocks)
    rows = blocks["instructions"]
    assert len(rows) == len(data["instructions"]) == data["dispatch"]["executed_instructions"]
    for row, want in zip(rows, data["instructions"]):
        assert int(row["line_number"]) == want["line_number"] and row["isa"] == want["isa"]
        assert int(row["stall"]) == want["stall"] and abs(float(row["share"]) - want["share"]) < 1e-6
    assert sum(int(r["stall"]) for r in blocks["stall"]) == data["totals"]["stall"]
    summary = {r["field"]: r["value"] for r in blocks["summary"]}
    assert int(summary["latency"]) == data["totals"]["latency"] and summary["tables_complete"] == "true"


def test_one_section_is_a_plain_table(cli) -> None:
    data = cli("--no-cache", "analyze", "--example", "--format", "json").json()["data"]
    text = _ok(cli, "analyze", "--example", "--format", "csv", "--section", "stall")
    assert not text.startswith("#") and "\n\n" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["category"] for r in rows] == [c["category"] for c in data["stall_by_category"]]


def test_plan_csv_lists_the_items_of_the_json(cli) -> None:
    items = cli("--no-cache", "plan", "--example", "--format", "json").json()["data"]["plan"]
    blocks = _blocks(_ok(cli, "plan", "--example", "--format", "csv"))
    assert [r["id"] for r in blocks["plan"]] == [i["id"] for i in items]
    assert [r["kind"] for r in blocks["plan"]] == [i["kind"] for i in items]
    with_plan = _blocks(_ok(cli, "analyze", "--example", "--plan", "--format", "csv"))
    assert [r["id"] for r in with_plan["plan"]] == [i["id"] for i in items]


def test_pmc_csv_and_sections(cli) -> None:
    data = cli("--no-cache", "pmc", str(PMC), "--arch", "gfx942", "--format", "json").json()["data"]
    blocks = _blocks(_ok(cli, "pmc", str(PMC), "--arch", "gfx942", "--format", "csv"))
    assert list(blocks) == [n for n in PMC_SPEC.sections if n in blocks]
    assert [(r["kernel"], float(r["l2_hit_pct"])) for r in blocks["kernels"]] == [
        (k["kernel"], k["l2_hit_pct"]) for k in data["kernels"]]
    # counters in long form: one row per kernel and counter, blank where not collected
    assert len(blocks["counters"]) == sum(len(k["counters"]) for k in data["kernels"])
    text = _ok(cli, "pmc", str(PMC), "--arch", "gfx942", "--section", "verdicts")
    assert text.startswith("Verdicts\n") and "Kernels" not in text
    bad = cli("--no-cache", "pmc", str(PMC), "--section", "nope")
    assert bad.exit_code == 2 and all(n in bad.stderr for n in PMC_SPEC.sections)


def test_kernels_and_diff_csv_are_their_json_rows(cli, tmp_path) -> None:
    from tests.conftest import CORPUS

    trace = CORPUS / "csv" / "kernel_trace.csv"
    if trace.exists():
        want = cli("--no-cache", "kernels", str(trace), "--format", "json").json()["data"]["kernels"]
        rows = list(csv.DictReader(io.StringIO(_ok(cli, "kernels", str(trace), "--format", "csv"))))
        assert [(r["kernel"], int(r["total_ns"]), r["regex"]) for r in rows] == [
            (k["name"], k["total_ns"], k["regex"]) for k in want]
    saved = tmp_path / "a.json"
    saved.write_text(_ok(cli, "analyze", "--example", "--format", "json"))
    want = cli("--no-cache", "diff", str(saved), str(saved), "--format", "json").json()["data"]["rows"]
    rows = list(csv.DictReader(io.StringIO(_ok(cli, "diff", str(saved), str(saved), "--format", "csv"))))
    assert [(r["key"], float(r["before"]), r["significant"]) for r in rows] == [
        (w["key"], w["before"], "true" if w["significant"] else "false") for w in want]


def test_csv_tables_are_chosen_as_the_text_sections_are():
    """One chooser (render/sections.py Parts) for text sections and CSV tables: `--section` keeps
    the asked ones in print order, an optional one only when asked, an empty text section never."""
    from hotspot.render.csv_views import CsvTables
    from hotspot.render.sections import Sections, showing

    def build() -> tuple[list[str], list[str], str]:
        text, tables = Sections(), CsvTables()
        for name, default in (("a", True), ("b", False), ("c", True)):
            text.add(name, f"{name} text", default)
            tables.table(name, ["x"], [[1]], default)
        text.add("empty", "")
        return text.names(), tables.names(), tables.text()

    assert build()[:2] == (["a", "c"], ["a", "c"])
    with showing(["c", "b"]):
        text_names, table_names, csv_text = build()
    assert text_names == table_names == ["b", "c"]
    assert csv_text == "# section: b\nx\n1\n\n# section: c\nx\n1\n"
    with showing(["b"]):
        assert build()[2] == "x\n1\n"  # one table: plain CSV, no section line
