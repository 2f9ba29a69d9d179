"""The early format-3.0.0 code.json (no header, 8-column rows): Stall and Idle rebuilt from the wave
files, every command runs on it; the legacy pre-3.0 layout stays refused with how to re-decode."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tests.conftest import corpus_path
from tests.test_read_once import opens  # noqa: F401  (the fixture)

# The early capture is analysed by several commands here: its wave pass is made once per run
# (tests/conftest.py shared_analyses; the read-once test turns the cache off itself).
pytestmark = pytest.mark.usefixtures("shared_analyses")

EARLY = "att/gfx950/triton_gemm_early3"
EARLY_DIR = EARLY + "/ui_output_agent_50282_dispatch_20"

# every modern (headed, cycle-mode) capture of the corpus, one per binary (the first of the three
# big flash-attention replicates: tests/test_report_html.py SAME_BINARY_REPLICATES)
MODERN = [
    "att/gfx950/vec_add",
    "att/gfx950/preshuffle_gemm_v2",
    "att/gfx950/blockscale_preshuffle_gemm",
    "att/gfx950/pa_mqa_logits_fp4_small",
    "att/gfx950/mla_decode",
    "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_1",
    "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_2",
    "att/gfx942/hipkittens_gemm_spill/ui_output_agent_18224_dispatch_48",
    "att/gfx950/flash_attn_replicates/big/ui_output_agent_25171_dispatch_44",
    "att/gfx950/flash_attn_replicates/small/ui_output_agent_14326_dispatch_44_after_loc_fix",
    "att/gfx950/flash_attn_replicates/small/ui_output_agent_23205_dispatch_44_after_loc_fix",
]


def _early_bytes(code_json: Path) -> bytes:
    """A modern code.json rewritten as the early layout: no header, the first 8 columns."""
    doc = json.loads(code_json.read_text())
    return orjson.dumps({"code": [r[:8] for r in doc["code"]], "version": doc["version"]})


@pytest.mark.parametrize("rel", MODERN)
def test_dropped_stall_idle_rebuilt_exactly(corpus, tmp_path, rel):
    from hotspot.capture import open_dispatch
    from hotspot.capture.codejson import read_code_json
    from hotspot.capture.early_layout import rebuild_columns

    d = corpus / rel
    original = read_code_json(d / "code.json")
    (tmp_path / "code.json").write_bytes(_early_bytes(d / "code.json"))
    early = read_code_json(tmp_path / "code.json")
    assert early.missing == ("Stall", "Idle") and early.rebuilt_from == 0
    assert all(r.stall == 0 and r.idle == 0 for r in early.rows)
    waves = open_dispatch(d).wave_files
    rebuilt = rebuild_columns(early, waves, None)
    assert rebuilt.rebuilt_from == len(waves) > 0
    assert len(rebuilt.rows) == len(original.rows)
    for got, want in zip(rebuilt.rows, original.rows):
        assert (got.line_number, got.hit, got.latency, got.stall, got.idle) == \
            (want.line_number, want.hit, want.latency, want.stall, want.idle)
    assert any(r.idle for r in original.rows) and any(r.stall for r in original.rows)
    assert "early format-3.0.0" in rebuilt.warnings[-1]


def test_idle_counts_gaps_after_the_latest_end():
    from hotspot.capture.early_layout import wave_stall_idle

    stall: dict[int, int] = {}
    idle: dict[int, int] = {}
    # begin 100; rec A at 110 (gap 10) ends 150; B at 120 overlaps (no gap) ends 130; C at 160:
    # gap from the latest end (150, not B's 130) = 10; C again at 200 after C ended 170: 30
    recs = [[110, 2, 3, 40, 1], [120, 6, 5, 10, 2], [160, 2, 0, 10, 3], [200, 2, 7, 9, 3]]
    wave_stall_idle(recs, 100, stall, idle)
    assert stall == {1: 3, 2: 5, 3: 7}
    assert idle == {1: 10, 3: 40}


def _independent_sums(d: Path) -> tuple[dict[int, int], dict[int, int], int]:
    """Stall and idle per line straight from the wave files with plain json (FORMATS.md §1.1)."""
    stall: dict[int, int] = {}
    idle: dict[int, int] = {}
    files = sorted(d.glob("se*_sm*_sl*_wv*.json"))
    for f in files:
        w = json.loads(f.read_text())["wave"]
        prev = w["begin"]
        for t, _c, s, dur, ln in w["instructions"]:
            stall[ln] = stall.get(ln, 0) + s
            idle[ln] = idle.get(ln, 0) + max(0, t - prev)
            prev = max(prev, t + dur)
    return stall, idle, len(files)


def test_early_capture_analyze_json(corpus, cli):
    d = corpus / EARLY_DIR
    doc = json.loads((d / "code.json").read_text())
    assert set(doc) == {"code", "version"} and len(doc["code"][1]) == 8  # the layout under test
    run = cli("analyze", corpus / EARLY, "--format", "json", "--topk", "0")
    assert run.exit_code == 0, run.stderr
    out = run.json()
    stall, idle, n = _independent_sums(d)
    rows = [r for r in doc["code"] if not r[0].startswith(";")]
    totals = out["data"]["totals"]
    assert totals["hit"] == sum(r[6] for r in rows)
    assert totals["latency"] == sum(r[7] for r in rows)
    assert totals["stall"] == sum(stall.get(r[2], 0) for r in rows) > 0
    assert totals["idle"] == sum(idle.get(r[2], 0) for r in rows) > 0
    by_line = {i["line_number"]: i for i in out["data"]["instructions"]}
    for r in rows:
        if r[2] in by_line:
            assert by_line[r[2]]["stall"] == stall.get(r[2], 0)
    finding = next(f for f in out["data"]["findings"] if f["id"] == "rebuilt-columns")
    assert finding["evidence"] == {"layout": "early-3.0.0", "columns": ["Stall", "Idle"],
                                   "wave_files": n}
    assert not any(f["id"] == "wave-mismatch" for f in out["data"]["findings"])
    assert any("early format-3.0.0" in w and "rebuilt" in w for w in out["warnings"])


@pytest.mark.parametrize("args", [
    ("plan",), ("plan", "--format", "json"), ("analyze", "--format", "markdown"),
])
def test_early_capture_every_view(corpus, cli, args):
    run = cli(*args, corpus / EARLY)
    assert run.exit_code == 0, run.stderr
    assert "Traceback" not in run.stderr


def test_early_capture_diff_report_export(corpus, cli, tmp_path):
    run = cli("diff", corpus / EARLY, corpus / EARLY, "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["data"]["code"]["same"] is True
    page = tmp_path / "r.html"
    run = cli("report", corpus / EARLY, "-o", page)
    assert run.exit_code == 0, run.stderr
    assert page.stat().st_size > 0
    trace = tmp_path / "t.json"
    run = cli("export", "perfetto", corpus / EARLY, "-o", trace)
    assert run.exit_code == 0, run.stderr
    assert trace.stat().st_size > 0


def test_report_listing_has_rebuilt_stall(corpus):
    from hotspot.export.report_data import listing

    d = corpus / EARLY_DIR
    stall, idle, _ = _independent_sums(d)
    rows = listing(d, "_gemm_afp4_wfp4_kernel", None)
    assert rows and all(r.stall == stall.get(r.line_number, 0) for r in rows)
    assert all(r.idle == idle.get(r.line_number, 0) for r in rows)


def test_legacy_layout_refused_with_redecode_hint(corpus, cli):
    run = cli("analyze", corpus / "att/other/legacy_pre3_ui", "--format", "json")
    assert run.exit_code == 3
    err = run.json()["error"]
    assert err["code"] == "legacy-layout"
    assert "re-decode" in err["hint"] and ".att" in err["hint"] and "rocprof-trace-decoder" in err["hint"]


def test_early_layout_told_by_shape():
    from hotspot.capture.codejson import is_early_layout, is_legacy

    early = {"code": [["s_nop 0", 0, 1, "", 1, 0, 1, 4]], "version": "3.0.0"}
    legacy = {"code": [["s_nop 0", 0, 1, "", 1, 0, 1, 4]], "top_n": 10}
    modern = {"code": [["s_nop 0", 0, 1, "", 1, 0, 1, 4, 0, 0]], "version": "3.0.0",
              "header": "ISA,_,LineNumber,Source,Codeobj,Vaddr,Hit,Latency,Stall,Idle"}
    assert is_early_layout(early) and not is_legacy(early)
    assert is_legacy(legacy) and not is_early_layout(legacy)
    assert not is_early_layout(modern) and not is_legacy(modern)
    # a headerless file whose rows are not 8 wide is not the early layout: refused as before
    assert not is_early_layout({"code": [["s_nop 0", 0, 1, "", 1, 0, 1, 4, 0, 0]], "version": "3.0.0"})


def test_early_empty_trace_is_an_empty_trace(tmp_path, cli):
    d = tmp_path / "ui_output_agent_1_dispatch_1"
    d.mkdir()
    (d / "code.json").write_text('{"code": null, "version": "3.0.0"}')
    (d / "filenames.json").write_text('{"gfxip": 9, "version": "3.0.0", "wave_filenames": {}}')
    run = cli("analyze", d)
    assert run.exit_code == 4, run.stderr


def test_rebuilt_stall_over_latency_is_refused(tmp_path):
    from hotspot.capture import read_code_table
    from hotspot.errors import InputError

    d = tmp_path / "ui_output_agent_1_dispatch_1"
    d.mkdir()
    (d / "code.json").write_text(json.dumps({"code": [["s_nop 0", 0, 1, "", 1, 0, 1, 4]],
                                             "version": "3.0.0"}))
    wave = {"wave": {"cu": 0, "simd": 0, "slot": 0, "id": 0, "begin": 0, "end": 100,
                     "instructions": [[0, 9, 50, 60, 1]], "timeline": [], "waitcnt": []}}
    (d / "se0_sm0_sl0_wv0.json").write_text(json.dumps(wave))
    with pytest.raises(InputError, match="larger than code.json's Latency"):
        read_code_table(d)


def test_modern_tables_unchanged():
    """A headed code.json is read as before: no missing columns, nothing rebuilt."""
    from hotspot.capture import read_code_table

    d = corpus_path("att/gfx950/vec_add")
    if not d.is_dir():
        pytest.skip("corpus absent")
    table = read_code_table(d)
    assert table.missing == () and table.rebuilt_from == 0


def test_early_capture_analyze_opens_each_wave_file_once(corpus, cli, tmp_path, opens):
    """The rebuild reads the wave files; the wave pass then gets their bytes without a second
    open."""
    import shutil

    cap = tmp_path / "cap"
    shutil.copytree(corpus / EARLY_DIR, cap)
    opens.clear()
    run = cli("analyze", cap, "--format", "json", "--no-cache")
    assert run.exit_code == 0, run.stderr
    waves = [str(p.resolve()) for p in cap.glob("se*_sm*_sl*_wv*.json")]
    assert waves and all(opens[p] == 1 for p in waves), {p: opens[p] for p in waves if opens[p] != 1}
