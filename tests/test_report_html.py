"""HTML report: structure, escaping, optional sections, report data, CLI behaviour (no browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hotspot.att.model import DispatchAnalysis, MultiAnalysis
from hotspot.decode import from_plain
from hotspot.export.report_data import listing, report_data, wave_timelines
from hotspot.export.timeline import downsample, pick_representative, segments
from hotspot.plan.model import PlanItem
from hotspot.render import html as html_view
from hotspot.render.html import script_safe_json
from hotspot.render.report_model import ReportDispatch, ReportPage, WaveTimelines
from tests.conftest import CORPUS

XSS_KERNEL = "<script>alert(1)</script>"
XSS_ISA = 'v_mov_b32 v0, "<img src=x onerror=alert(2)>"'
XSS_FILE = '/w/"><script>alert(3)</script>.py'
SECTIONS = ("summary", "roofline", "categories", "source", "isa", "loads", "timeline", "more")


# ------------------------------------------------------------------------------ synthetic inputs

def make_script_kernel_dir(root: Path, kernel: str = XSS_KERNEL) -> Path:
    """A small dispatch dir whose kernel name (and source paths) carry HTML: hotspot.synth when it is
    available, else a hand-built one (one wave, four instructions)."""
    try:
        from hotspot.synth import (
            DispatchSpec,
            InstructionMix,
            SourceSpec,
            make_dispatch,
        )
    except ImportError:
        return _hand_built_dir(root, kernel)
    spec = DispatchSpec(kernel=kernel, waves=6, program=InstructionMix().scaled(30),
                        sources=SourceSpec(files=("/w/<b>kern</b>.py", "/w/a&b.py")))
    return make_dispatch(root, spec)


def _hand_built_dir(root: Path, kernel: str) -> Path:
    d = root / "ui_output_agent_1_dispatch_1"
    d.mkdir(parents=True)
    # [time, decoder category, stall, duration, line_number] per instruction of the one wave
    insts = [[104, 1, 0, 4, 1], [108, 3, 8, 12, 2], [120, 9, 300, 300, 3], [420, 11, 0, 4, 4]]
    rows = [["; " + kernel, 0, 0, "", 1, 0, 0, 0, 0, 0],
            ["s_load_dword s0, s[0:1], 0x0", 0, 1, "/w/<b>kern</b>.py:3", 1, 0, 1, 4, 0, 0],
            ["global_load_dword v1, v[2:3], off", 0, 2, "/w/<b>kern</b>.py:4", 1, 4, 1, 12, 8, 0],
            ["s_waitcnt vmcnt(0)", 0, 3, "/w/a&b.py:9", 1, 8, 1, 300, 300, 0],
            ["s_endpgm", 0, 4, "/w/a&b.py:9", 1, 12, 1, 4, 0, 0]]
    header = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
    (d / "code.json").write_bytes(orjson.dumps({"code": rows, "header": header, "version": "3.0.0"}))
    wave = {"cu": 1, "simd": 0, "slot": 0, "id": 0, "begin": 100, "end": 424, "instructions": insts,
            "timeline": [[1, 4], [2, 16], [3, 300], [2, 4]], "waitcnt": [[3, [[2, 0]]]]}
    (d / "se0_sm0_sl0_wv0.json").write_bytes(orjson.dumps({"name": "SE0", "duration": 324,
                                                           "num_insts": 4, "wave": wave}))
    (d / "filenames.json").write_bytes(orjson.dumps({
        "gfxip": 9, "version": "3.0.0", "wave_filenames": {"0": {"0": {"0": {"0": [
            "se0_sm0_sl0_wv0.json", 100, 424]}}}}}))
    (d / "occupancy.json").write_bytes(orjson.dumps({"0": [], "dispatches": {}, "version": "3.0.0"}))
    return d


def minimal_data(kernel: str = "k") -> dict:
    """The smallest analyze-shaped data: every optional section absent."""
    return {
        "dispatch": {"path": "/x/ui_output_agent_1_dispatch_1", "agent_handle": None,
                     "dispatch_id": None, "kernel": kernel, "symbol": kernel,
                     "waves": 1, "code_rows": 2, "executed_instructions": 2, "source_mapped_pct": 50.0,
                     "kernels_in_code": 1},
        "arch": {"gfx": "gfx950", "product": None, "source": "test", "known": True, "candidates": [],
                 "features": []},
        "mode": "cycles",
        "totals": {"hit": 2, "latency": 400, "stall": 300, "idle": 0, "issue": 100},
        "stall_by_category": [{"category": "wait-vmcnt", "stall": 300, "share": 1.0, "latency": 300,
                               "hit": 1, "instructions": 1}],
        "instructions": [
            {"line_number": 2, "isa": XSS_ISA, "category": "valu", "hit": 1, "latency": 100,
             "stall": 0, "idle": 0, "issue": 100, "share": 0.0, "stall_per_hit": 0.0,
             "source": XSS_FILE + ":7"},
            {"line_number": 1, "isa": "s_waitcnt vmcnt(0)", "category": "wait-vmcnt", "hit": 1,
             "latency": 300, "stall": 300, "idle": 0, "issue": 0, "share": 1.0, "stall_per_hit": 300.0,
             "source": ""}],
        "source_lines": [{"file": XSS_FILE, "line": 7, "stall": 0, "latency": 100, "hit": 1, "idle": 0,
                          "share": 0.0, "stall_rate": 0.0, "stall_per_hit": 0.0,
                          "dominant_category": "valu", "categories": {"valu": 0}, "instructions": [2],
                          "chains": []}],
        "files": [], "instruction_mix": [], "findings": [],
    }


def typed(d: dict) -> DispatchAnalysis:
    """The analysis `d` (analyze's JSON shape) as the typed value the page renders."""
    a = from_plain(DispatchAnalysis, d)
    if d.get("plan"):
        a.plan = from_plain(list[PlanItem], d["plan"])
    return a


def render_page(data: dict | ReportPage, **views: object) -> str:
    """The page of plain analyze data (or of report data), with the report's views when given."""
    if isinstance(data, dict):
        if data.get("plan"):  # the items a saved `analyze --plan` holds: the page shows them
            from hotspot.decode import from_plain
            from hotspot.plan.model import PlanItem

            views.setdefault("plan", from_plain(list[PlanItem], data["plan"]))
        data = ReportPage([ReportDispatch(typed(data), **views)])
    return html_view.render_page(data)


def blob_of(page: str, index: int = 0) -> dict:
    blobs = re.findall(r'<script type="application/json" class="hotspot-data">(.*?)</script>', page, re.S)
    return json.loads(blobs[index])


def text_of(page: str) -> str:
    """Page text without tags, entities decoded (what a reader sees, roughly)."""
    import html

    no_scripts = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", no_scripts))


# ------------------------------------------------------------------------------------- escaping

def test_strings_from_inputs_are_escaped():
    page = render_page(minimal_data(XSS_KERNEL))
    # exactly our own two scripts (data blob + page script): nothing from the inputs became a tag
    assert len(re.findall(r"<script\b", page)) == 2
    assert "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert f"<title>hotspot report: {'&lt;script&gt;alert(1)&lt;/script&gt;'}</title>" in page
    # shown as text
    txt = text_of(page)
    assert XSS_KERNEL in txt
    assert "/w/\"><script>alert(3)</script>.py" in txt
    # the embedded data never contains a literal < > & but decodes back to the exact strings
    raw_blob = re.search(r'class="hotspot-data">(.*?)</script>', page, re.S).group(1)
    assert not set("<>&") & set(raw_blob)
    rows = blob_of(page)["rows"]
    assert [r[1] for r in rows] == ["s_waitcnt vmcnt(0)", XSS_ISA]  # program order
    assert rows[1][7] == XSS_FILE + ":7"


def test_script_safe_json_round_trips_hostile_strings():
    hostile = {"a": "</script><script>x()</script>", "b": "&amp; \u2028 \u2029 <!--", "c": "\\u003c"}
    text = script_safe_json(hostile)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == hostile


def test_page_is_self_contained():
    page = render_page(minimal_data())
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(http" not in page
    assert "<link rel=\"stylesheet\"" not in page


# ---------------------------------------------------------------------------- optional sections

def test_every_section_renders_when_optional_fields_are_absent_none_or_empty():
    base = minimal_data()
    variants = [(dict(base), {})]
    d = dict(base)
    for key in ("occupancy", "waits", "blamed_lines", "lgkm_breakdown", "wave_states", "loops",
                "barriers", "plan", "samples", "selection"):
        d[key] = None
    variants.append((d, {"listing": None, "wave_timelines": None}))
    d = dict(base)
    for key in ("waits", "blamed_lines", "loops", "barriers", "plan"):
        d[key] = []
    variants.append((d, {"listing": [], "wave_timelines": WaveTimelines(0, 1500, [])}))
    for d, views in variants:
        page = render_page(d, **views)
        for name in SECTIONS:
            assert f'data-section="{name}"' in page, name
        assert "not in this data" in page


def test_optional_sections_light_up_when_present():
    d = minimal_data()
    d["occupancy"] = {"available": True, "reason": "", "arch": "gfx950",
                      "waves_per_simd": 4, "limiter": "vgpr", "limits": {"vgpr": 4, "lds": 8},
                      "next_step": {"vgpr": {"target_waves": 5, "resource": "vgpr_total", "current": 100,
                                             "max_allowed": 96, "reduce_by": 4,
                                             "message": "use at most 96 VGPRs for 5 waves"}},
                      "resources": {"vgpr": 100}, "achieved": {"mean_waves_per_simd": 1.5,
                                                              "peak_waves_per_simd": 2,
                                                              "simds": 4, "waves": 6,
                                                              "kernel_ids": [1]}}
    d["waits"] = [{"line_number": 1, "isa": "s_waitcnt vmcnt(0)", "category": "wait-vmcnt",
                   "source": "", "stall": 300, "hits": 1, "share": 1.0,
                   "producers": [{"line_number": 2, "isa": XSS_ISA, "category": "vmem-load",
                                  "source": "k.py:7", "blamed_stall": 240, "share": 0.8,
                                  "instances": 1, "median_distance_cycles": 120,
                                  "median_distance_instructions": 3}]}]
    d["plan"] = [{"id": "p1", "priority": "HIGH", "title": "Prefetch the <A> tile", "kind": "code",
                  "location": {"file": "k.py", "line": 7, "line_number": 2, "isa": None, "kernel": "k"},
                  "evidence": [{"metric": "share", "value": 0.8}], "root_cause": "the load waits",
                  "fix": "double-buffer",
                  "estimate": {"low_pct": 5, "high_pct": 12, "basis": "wait share",
                               "target_cycles": 240, "target_stall_pct": 80.0}}]
    d["loops"] = [{"first_line_number": 1, "last_line_number": 2, "source_range": "k.py:7-9",
                   "iterations": 8, "back_edges": 7, "waves": 1, "iterations_per_wave": 8.0,
                   "stall": 300, "share": 1.0, "hot_wait": None}]
    page = render_page(d)
    txt = text_of(page)
    assert "limited by vgpr" in txt and "achieved mean" in txt and "1.5" in txt
    assert "use at most 96 VGPRs for 5 waves" in txt
    assert "Prefetch the <A> tile" in txt and "5–12%" in txt and "double-buffer" in txt
    assert "k.py:7 #2" in txt and "share = 0.8" in txt
    # top blamed loads built from waits: producer #2 with its blamed stall and share
    loads = page[page.index('data-section="loads"'):page.index('data-section="timeline"')]
    assert 'href="#d0-isa-2"' in loads and "240" in loads and "80.0%" in loads
    # ISA view data: wait line 1 -> producer 2 with share 0.8
    assert blob_of(page)["waits"] == {"1": [[2, 0.8, 240]]}
    assert 'data-part="loops"' in page


def test_several_dispatches_render_each_with_its_own_data():
    a, b = minimal_data("first"), minimal_data("second")
    row = {"instructions_hit": 2, "code_rows": 2, "source_mapped_pct": 50.0, "idle_slice": False,
           "dispatch_id": None}
    multi = from_plain(MultiAnalysis, {"dispatches": [a, b], "ranking": [
        {"path": "p1", "kernel": "first", "waves": 2, "executed_instructions": 2, "status": "ok", **row},
        {"path": "p2", "kernel": "second", "waves": 1, "executed_instructions": 2, "status": "ok", **row}]})
    page = html_view.render_page(multi)
    assert 'id="d0"' in page and 'id="d1"' in page
    assert blob_of(page, 1)["prefix"] == "d1"
    assert 'data-section="ranking"' in page


# ------------------------------------------------------------------------------- timeline logic

def test_pick_representative_by_hand():
    assert pick_representative([]) == []
    assert pick_representative([5]) == [("longest", 0)]
    assert pick_representative([5, 9]) == [("longest", 1), ("median", 0)]
    # durations 7,3,9,5,9: longest = first 9 (index 2), median of sorted [3,5,7,9,9] = 7 (index 0)
    assert pick_representative([7, 3, 9, 5, 9]) == [("longest", 2), ("median", 0), ("shortest", 1)]


def test_segments_merge_and_offsets():
    assert segments([[1, 4], [2, 0], [2, 6], [3, 10], [2, 2]]) == [[1, 0, 4], [2, 4, 6], [3, 10, 10],
                                                                    [2, 20, 2]]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 50)), min_size=1, max_size=300),
       st.integers(1, 40))
def test_downsample_keeps_total_and_contiguity(parts, max_segments):
    segs = segments([list(p) for p in parts])
    out, reduced = downsample(segs, max_segments)
    if not segs:
        assert out == []
        return
    total = sum(s[2] for s in segs)
    assert sum(s[2] for s in out) == total
    t = 0
    for state, start, cycles in out:
        assert start == t and cycles > 0 and 0 <= state <= 4
        t += cycles
    assert reduced == (len(segs) > max_segments)
    if reduced:
        assert len(out) <= max_segments


# ---------------------------------------------------------------------------------- corpus data

def corpus_wave_dirs() -> list[str]:
    """Every corpus dispatch dir with wave files in the supported (3.0.0) layout, relative to the
    corpus. Without the corpus one placeholder id stays, which the `corpus` fixture skips."""
    if not CORPUS.is_dir():
        return ["att/gfx950/vec_add"]
    out = []
    for code in CORPUS.glob("att/**/code.json"):
        if next(code.parent.glob("se*_sm*_sl*_wv*.json"), None) is None:
            continue
        if orjson.loads(code.read_bytes()).get("version") != "3.0.0":
            continue  # the legacy layout is refused (tested in test_perfetto)
        out.append(str(code.parent.relative_to(CORPUS)))
    return sorted(out)


# Two of the three big flash-attention replicates: one binary captured three times (corpus README:
# the ISA is identical within each size, every difference between them is capture noise), so a
# check of one capture's output reads the first (before the compiler's source-location fix; the
# small replicates are after it). tests/test_diff_calibration.py still reads all three (the noise
# between them is what it measures).
SAME_BINARY_REPLICATES = ("att/gfx950/flash_attn_replicates/big/ui_output_agent_27340_dispatch_44_after_loc_fix",
                          "att/gfx950/flash_attn_replicates/big/ui_output_agent_34195_dispatch_44_after_loc_fix")


def corpus_layout_dirs() -> list[str]:
    """corpus_wave_dirs() with one capture per binary: every layout, arch and format version the
    corpus holds, without the replicates above."""
    return [rel for rel in corpus_wave_dirs() if rel not in SAME_BINARY_REPLICATES]


def test_report_data_on_vec_add(corpus):
    d = corpus / "att/gfx950/vec_add"
    data = report_data(d).data.dispatches[0]
    # listing: every code row, in program order
    code = orjson.loads((d / "code.json").read_bytes())["code"]
    real_rows = [r for r in code if not r[0].startswith(";")]
    assert [r.line_number for r in data.listing] == [r[2] for r in real_rows]
    assert sum(r.stall for r in data.listing) == 2_101_364  # corpus README
    # representative waves: longest/median/shortest by filenames.json begin/end
    names = orjson.loads((d / "filenames.json").read_bytes())["wave_filenames"]
    spans = {}
    for se in names.values():
        for simd in se.values():
            for slot in simd.values():
                for name, begin, end in slot.values():
                    spans[name] = end - begin
    waves = data.wave_timelines.waves
    assert waves[0].role == "longest" and waves[0].cycles == max(spans.values())
    assert waves[-1].role == "shortest" and waves[-1].cycles == min(spans.values())
    for w in waves:
        tl = orjson.loads((d / w.file).read_bytes())["wave"]["timeline"]
        assert sum(s[2] for s in w.segments) == sum(c for _, c in tl)
        assert sum(w.states.values()) == sum(c for _, c in tl)


@pytest.mark.parametrize("rel", ["att/gfx950/mla_decode", "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_2"])
def test_report_page_on_corpus(corpus, rel):
    page_data = report_data(corpus / rel).data
    page = render_page(page_data)
    view = page_data.dispatches[0]
    a = view.analysis
    for name in SECTIONS:
        assert f'data-section="{name}"' in page
    blob = blob_of(page)
    assert len(blob["rows"]) == a.dispatch.code_rows == len(view.listing)
    assert page.count('class="src-row"') == len(a.source_lines)
    assert page.count("<rect ") == sum(len(w.segments) for w in view.wave_timelines.waves)
    # a source line's hidden detail lists its instructions' ISA text
    if a.source_lines:
        by_line = {r.line_number: r.isa for r in view.listing}
        first = a.source_lines[0]
        detail = page[page.index('id="d0-src-0"'):]
        detail = detail[:detail.index("</tr></tbody></table></td></tr>")]
        import html

        for n in first.instructions[:5]:
            assert html.escape(by_line[n]) in detail


def test_listing_selects_the_kernel_by_symbol(tmp_path):
    d = _hand_built_dir(tmp_path, "kern_a")
    assert [r.line_number for r in listing(d, "kern_a", None)] == [1, 2, 3, 4]
    assert [r.category for r in listing(d, "kern_a", None)] == ["smem", "vmem-load", "wait-vmcnt",
                                                                "message"]
    wt = wave_timelines(d, None)
    assert wt.waves_total == 1 and wt.waves[0].segments == [("idle", 0, 4), ("exec", 4, 16),
                                                            ("wait", 20, 300), ("exec", 320, 4)]


# ------------------------------------------------------------------------------------------ CLI

def test_report_cli_writes_and_refuses_to_clobber_the_default(cli, tmp_path, monkeypatch):
    d = _hand_built_dir(tmp_path / "in", "kern")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.html").write_text("mine")
    r = cli("report", str(d))
    assert r.exit_code == 3 and "already exists" in r.stderr and "--force" in r.stderr
    assert (tmp_path / "report.html").read_text() == "mine"
    r = cli("report", str(d), "--force")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    # an explicit -o naming an existing file is refused too, and --force replaces it
    (tmp_path / "mine.html").write_text("old")
    r = cli("report", str(d), "-o", "mine.html")
    assert r.exit_code == 3 and (tmp_path / "mine.html").read_text() == "old"
    r = cli("report", str(d), "-o", "mine.html", "--force", "--format", "json")
    assert r.exit_code == 0
    out = r.json()["data"]
    assert out["output"] == "mine.html" and out["isa_rows"] == 4 and out["full_listing"] is True
    assert out["bytes"] == (tmp_path / "mine.html").stat().st_size
    assert not list(tmp_path.glob(".mine.html.*"))  # no temp file left behind


def test_report_to_stdout_and_analyze_html(cli, tmp_path):
    d = _hand_built_dir(tmp_path, XSS_KERNEL)
    r = cli("report", str(d), "-o", "-")
    assert r.exit_code == 0 and r.stdout.startswith("<!DOCTYPE html>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.stdout
    r = cli("analyze", str(d), "--format", "html")
    assert r.exit_code == 0 and r.stdout.startswith("<!DOCTYPE html>")
    assert 'data-section="isa"' in r.stdout


def test_report_from_saved_json(cli, tmp_path):
    d = _hand_built_dir(tmp_path / "in", "saved_kernel")
    r = cli("analyze", str(d), "--format", "json", "--topk", "0")
    assert r.exit_code == 0
    saved = tmp_path / "a.json"
    saved.write_text(r.stdout)
    r = cli("report", str(saved), "-o", str(tmp_path / "s.html"), "--format", "json")
    assert r.exit_code == 0, r.stderr
    page = (tmp_path / "s.html").read_text()
    assert "saved_kernel" in page and len(blob_of(page)["rows"]) == 4  # all executed rows
    # an error envelope, or unrelated JSON, is refused naming the file
    bad = tmp_path / "err.json"
    bad.write_text(json.dumps({"schema_version": 1, "command": "analyze", "ok": False,
                               "error": {"code": "empty-trace"}}))
    r = cli("report", str(bad), "-o", str(tmp_path / "x.html"))
    assert r.exit_code == 3 and "err.json" in r.stderr
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    r = cli("report", str(other), "-o", str(tmp_path / "x.html"))
    assert r.exit_code == 3 and "other.json" in r.stderr
    assert not (tmp_path / "x.html").exists()


def test_report_errors(cli, tmp_path):
    r = cli("report", str(tmp_path / "missing"), "-o", str(tmp_path / "x.html"))
    assert r.exit_code == 3 and r.stderr.count("\n") == 1
    r = cli("report", str(tmp_path), "-o", str(tmp_path / "no_dir" / "x.html"))
    assert r.exit_code == 3 and "no_dir" in r.stderr
    r = cli("report", str(tmp_path), "-o", "-", "--format", "json")
    assert r.exit_code == 2


def test_a_wait_with_nothing_outstanding_links_nowhere():
    d = minimal_data()
    d["waits"] = [{"line_number": 1, "isa": "s_waitcnt vmcnt(0)", "category": "wait-vmcnt",
                   "source": "", "stall": 300, "hits": 1, "share": 1.0,
                   "producers": [{"line_number": None, "isa": "", "category": "none", "source": "",
                                  "blamed_stall": 300, "share": 1.0, "instances": 1,
                                  "median_distance_cycles": None,
                                  "median_distance_instructions": None}]}]
    page = render_page(d)
    loads = page[page.index('data-section="loads"'):page.index('data-section="timeline"')]
    assert 'href="#d0-isa-None"' not in page and ">#None" not in loads and "# 100.0%" not in loads
    assert "nothing outstanding 100.0%" in text_of(loads)
    assert blob_of(page)["waits"] == {"1": []}


def test_heading_uses_the_short_kernel_name_and_shows_the_full_one_once():
    d = minimal_data()
    full = "void ck_tile::kentry<1, ck_tile::BatchedGemmKernel<A, B>>(ck_tile::Args)"
    d["dispatch"] = dict(d.get("dispatch") or {}, kernel=full)
    page = render_page(d)
    h1 = page[page.index("<h1>"):page.index("</h1>")]
    assert ">ck_tile::kentry&lt;…&gt;</span>" in h1
    assert "<title>hotspot report: ck_tile::kentry&lt;…&gt;</title>" in page
    assert "BatchedGemmKernel" not in h1
    header = page[page.index("</h1>"):page.index("</header>")]
    assert header.count("BatchedGemmKernel&lt;A, B&gt;") == 1  # the full name once, folded
    assert 'data-part="kernel-full"' in header


def test_report_confirmation_is_one_short_line_on_ck(corpus, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = tmp_path / "ck.html"
    run = cli("report", corpus / "att" / "gfx942" / "ck_bmm", "--output", out)
    assert run.exit_code == 0, run.stderr
    lines = [ln for ln in run.stdout.splitlines() if ln.strip()]
    assert all(len(ln) <= 100 for ln in lines), lines
    assert "ck_tile::kentry<…>" in run.stdout and "BatchedGemmKernel" not in run.stdout


def test_more_analysis_sections_are_tables_with_named_columns():
    """Loops, barriers, the lgkmcnt breakdown and the mix as tables, not `key: value; ...` dumps;
    long paths shortened from the left with the whole string kept in the tooltip."""
    from hotspot.examples import example_dispatch_dir

    page_data = report_data(example_dispatch_dir()).data
    page = render_page(page_data)
    a = page_data.dispatches[0].analysis
    more = page[page.index('data-section="more"'):]
    more = more[:more.index("</section>")]
    txt = text_of(more)
    for head in ("producer", "hottest wait", "its load", "median spread (cyc)", "of dynamic"):
        assert head in txt, head
    assert "hot_wait" not in txt and "producer_class" not in txt
    assert not re.search(r"[a-z_]+: [^;]*; [a-z_]+: ", txt)  # no `key: value; key: value` dump
    loop = a.loops[0]
    assert f"{loop.stall:,}" in txt and f"{100 * loop.share:.1f}%" in txt
    hot = loop.hot_wait
    assert f"#{hot.line_number} {hot.isa}" in txt
    assert f'title="{hot.top_producer_source}"' in more
    mix = a.instruction_mix
    total = sum(m.dynamic for m in mix)
    assert f"{100 * mix[0].dynamic / total:.1f}%" in txt


@pytest.mark.parametrize("rel", ["att/gfx950/mla_decode", "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_2"])
def test_page_in_pieces_is_the_same_page(corpus, rel, monkeypatch, tmp_path, cli):
    """report writes page_chunks as they come (issue 19): any piece size gives the same page, and
    the file is the page render_html gives."""
    import hotspot.render.html as html_mod
    from hotspot.result import Result

    result = report_data(corpus / rel)
    whole = html_mod.render_html(Result("report", result.data, result.warnings))
    for rows, chars in ((1, 1), (3, 5000), (1000, 1 << 30)):
        monkeypatch.setattr(html_mod, "CHUNK_ROWS", rows)
        monkeypatch.setattr(html_mod, "CHUNK_CHARS", chars)
        assert "".join(html_mod.page_chunks(result.data, list(result.warnings))) == whole
    monkeypatch.setattr(html_mod, "CHUNK_ROWS", 7)
    out = tmp_path / "r.html"
    assert cli("report", str(corpus / rel), "-o", str(out)).exit_code == 0
    assert out.read_text(encoding="utf-8") == whole
