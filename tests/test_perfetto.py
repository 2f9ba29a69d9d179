"""Perfetto export: trace-event format validity, timing maps, track layout, CLI behaviour."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import orjson
import pytest

from hotspot.capture.realtime import fit
from tests.test_report_html import _hand_built_dir, corpus_layout_dirs

# The same corpus captures are analyzed by several tests and commands here: their wave pass is
# made once per test process (tests/conftest.py shared_analyses).
pytestmark = pytest.mark.usefixtures("shared_analyses")

EPS_US = 1e-6  # float slack when comparing slice ends with the next slice's start


def validate_trace(doc: dict) -> dict[tuple[int, int], list[dict]]:
    """Check the Chrome trace-event JSON object format; returns X slices per (pid, tid) track."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list)
    named_threads, named_procs = set(), set()
    tracks: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for ev in doc["traceEvents"]:
        assert isinstance(ev.get("name"), str) and ev["name"], ev
        assert ev.get("ph") in ("X", "M"), ev
        assert isinstance(ev.get("pid"), int) and isinstance(ev.get("tid"), int), ev
        if ev["ph"] == "M":
            assert ev["name"] in ("process_name", "process_sort_index", "thread_name",
                                  "thread_sort_index"), ev
            assert isinstance(ev.get("args"), dict), ev
            if ev["name"].endswith("_name"):
                assert isinstance(ev["args"].get("name"), str) and ev["args"]["name"]
                (named_procs if ev["name"] == "process_name" else named_threads).add(
                    ev["pid"] if ev["name"] == "process_name" else (ev["pid"], ev["tid"]))
            else:
                assert isinstance(ev["args"].get("sort_index"), int)
        else:
            for key in ("ts", "dur"):
                assert isinstance(ev.get(key), (int, float)) and not isinstance(ev[key], bool), ev
            assert ev["ts"] >= 0 and ev["dur"] >= 0, ev
            assert isinstance(ev.get("cat"), str) and isinstance(ev.get("args"), dict)
            tracks[(ev["pid"], ev["tid"])].append(ev)
    for (pid, tid), slices in tracks.items():
        assert pid in named_procs and (pid, tid) in named_threads
        for a, b in zip(slices, slices[1:]):  # emitted in time order, never overlapping
            assert a["ts"] <= b["ts"], (a, b)
            assert a["ts"] + a["dur"] <= b["ts"] + EPS_US, (a, b)
    return tracks


def export(cli, d: Path, out: Path, *extra: str) -> dict:
    r = cli("export", "perfetto", str(d), "-o", str(out), "--format", "json", *extra)
    assert r.exit_code == 0, r.stderr
    return r.json()["data"]


INSTRUCTIONS_MAX_WAVE_BYTES = 32 * 2**20


@pytest.mark.slow
@pytest.mark.parametrize("rel", corpus_layout_dirs())
def test_corpus_export_is_valid_and_complete(corpus, cli, tmp_path, rel):
    d = corpus / rel
    out = tmp_path / "trace.json"
    wave_files = sorted(d.glob("se*_sm*_sl*_wv*.json"))
    # instruction slices on every capture but the largest (hipkittens: 63 MB of waves make a 780 MB
    # trace whose reading alone took 13 s of the suite's budget); its wave states are checked here
    # and the instruction slices on every other capture
    with_instructions = sum(f.stat().st_size for f in wave_files) <= INSTRUCTIONS_MAX_WAVE_BYTES
    summary = export(cli, d, out, *(["--instructions"] if with_instructions else []))
    doc = orjson.loads(out.read_bytes())
    tracks = validate_trace(doc)
    assert summary["waves"] == len(wave_files) and summary["tracks"] == (2 if with_instructions else 1) * len(wave_files)
    assert summary["events"] == len(doc["traceEvents"])
    # wall time when the capture has realtime.json (hipkittens_gemm_spill and the early-layout
    # capture have none: shader cycles then)
    base = "realtime" if (d / "realtime.json").is_file() else "shader-cycles"
    assert summary["time_base"] == doc["otherData"]["time_base"] == base
    # independently: one state slice per non-empty timeline run, one instruction slice per record
    states = insts = 0
    for wf in wave_files:
        w = orjson.loads(wf.read_bytes())["wave"]
        states += sum(1 for _, c in w["timeline"] if c > 0)
        insts += len(w["instructions"])
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert sum(1 for e in xs if e["cat"] == "wave-state") == states
    assert sum(1 for e in xs if e["cat"] == "instruction") == (insts if with_instructions else 0)
    assert len(tracks) <= summary["tracks"]


def test_realtime_mapping_by_hand(corpus, cli, tmp_path):
    d = corpus / "att/gfx950/mla_decode"
    out = tmp_path / "t.json"
    export(cli, d, out)
    doc = orjson.loads(out.read_bytes())
    rt = orjson.loads((d / "realtime.json").read_bytes())
    hz = rt["metadata"]["frequency"]

    def ticks(se: int, cycle: int) -> float:  # two anchors per SE in this capture: a line
        (g0, r0), (g1, r1) = rt[f"SE{se}"]
        return r0 + (cycle - g0) * (r1 - r0) / (g1 - g0)

    names = orjson.loads((d / "filenames.json").read_bytes())["wave_filenames"]
    begins = {}
    for se, simds in names.items():
        for simd in simds.values():
            for slot in simd.values():
                for name, begin, _end in slot.values():
                    begins[name] = (int(se), begin)
    origin = min(ticks(se, b) for se, b in begins.values())
    # the wave se1_sm0_sl0_wv0: its track is named and its first slice starts at its begin
    se, begin = begins["se1_sm0_sl0_wv0.json"]
    tid = next(e["tid"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"
               and e["pid"] == se and e["args"]["name"] == "SIMD0 slot0 wave0")
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == se and e["tid"] == tid]
    assert slices[0]["ts"] == pytest.approx((ticks(se, begin) - origin) * 1e6 / hz, abs=1e-6)
    w = orjson.loads((d / "se1_sm0_sl0_wv0.json").read_bytes())["wave"]
    total_cycles = sum(c for _, c in w["timeline"])
    span_us = slices[-1]["ts"] + slices[-1]["dur"] - slices[0]["ts"]
    (g0, r0), (g1, r1) = rt["SE1"]
    assert span_us == pytest.approx(total_cycles * (r1 - r0) / (g1 - g0) * 1e6 / hz, rel=1e-9)
    assert [s["args"]["cycles"] for s in slices] == [c for _, c in w["timeline"] if c > 0]
    assert min(e["ts"] for e in doc["traceEvents"] if e["ph"] == "X") == pytest.approx(0, abs=1e-9)


def test_shader_cycles_without_realtime_and_clipped_instructions(cli, tmp_path):
    d = _hand_built_dir(tmp_path / "in", "k")
    # make instruction 2 run past the start of instruction 3 (real captures have a few of these)
    p = d / "se0_sm0_sl0_wv0.json"
    doc = orjson.loads(p.read_bytes())
    doc["wave"]["instructions"][1][3] = 40  # starts at 108, next starts at 120
    p.write_bytes(orjson.dumps(doc))
    out = tmp_path / "t.json"
    summary = export(cli, d, out, "--instructions")
    trace = orjson.loads(out.read_bytes())
    validate_trace(trace)
    assert summary["time_base"] == "shader-cycles" and "cycles" in trace["otherData"]["time_unit"]
    assert any("shader cycles" in e["args"]["name"] for e in trace["traceEvents"]
               if e["name"] == "process_name")
    states = [e for e in trace["traceEvents"] if e.get("cat") == "wave-state"]
    assert [(e["name"], e["ts"], e["dur"]) for e in states] == [
        ("IDLE", 0, 4), ("EXEC", 4, 16), ("WAIT", 20, 300), ("EXEC", 320, 4)]
    insts = [e for e in trace["traceEvents"] if e.get("cat") == "instruction"]
    assert [(e["name"], e["ts"], e["dur"]) for e in insts] == [
        ("s_load_dword", 4, 4), ("global_load_dword", 8, 12), ("s_waitcnt", 20, 300), ("s_endpgm", 320, 4)]
    assert insts[1]["args"]["duration_cycles"] == 40 and insts[1]["args"]["clipped_at_next_instruction"]
    assert insts[2]["args"]["stall_cycles"] == 300 and insts[2]["args"]["isa"] == "s_waitcnt vmcnt(0)"


def test_fit():
    m = fit([(100, 1000), (300, 1010)])
    assert m is not None and m.slope == pytest.approx(0.05) and m.ticks(200) == pytest.approx(1005)
    assert fit([(100, 1000)]) is None
    assert fit([(100, 1000), (100, 1005)]) is None  # no spread in shader clock
    assert fit([(100, 1000), (200, 900)]) is None  # time going backwards


def test_bad_realtime_falls_back_with_a_warning(cli, tmp_path):
    d = _hand_built_dir(tmp_path / "in", "k")
    (d / "realtime.json").write_text('{"SE0": [[1, 2]], "metadata": {"frequency": 100000000}}')
    r = cli("export", "perfetto", str(d), "-o", str(tmp_path / "t.json"), "--format", "json")
    assert r.exit_code == 0
    assert r.json()["data"]["time_base"] == "shader-cycles"
    assert any("realtime.json" in w and "SE0" in w for w in r.json()["warnings"])


def test_export_errors_and_default_name(cli, tmp_path, monkeypatch):
    d = _hand_built_dir(tmp_path / "in", "k")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trace.json").write_text("mine")
    r = cli("export", "perfetto", str(d))
    assert r.exit_code == 3 and "already exists" in r.stderr
    assert (tmp_path / "trace.json").read_text() == "mine"
    assert cli("export", "perfetto", str(d), "--force").exit_code == 0
    validate_trace(orjson.loads((tmp_path / "trace.json").read_bytes()))
    # stdout
    r = cli("export", "perfetto", str(d), "-o", "-")
    assert r.exit_code == 0
    validate_trace(orjson.loads(r.stdout))
    # empty trace: exit 4
    empty = tmp_path / "ui_output_agent_1_dispatch_9"
    empty.mkdir()
    (empty / "code.json").write_text('{"code": null, "header": "ISA, _, LineNumber, Source, Codeobj, '
                                     'Vaddr, Hit, Latency, Stall, Idle", "version": "3.0.0"}')
    r = cli("export", "perfetto", str(empty), "-o", str(tmp_path / "e.json"))
    assert r.exit_code == 4 and not (tmp_path / "e.json").exists()
    # a malformed timeline names the file and field
    p = d / "se0_sm0_sl0_wv0.json"
    doc = orjson.loads(p.read_bytes())
    doc["wave"]["timeline"][1] = ["x", 3]
    p.write_bytes(orjson.dumps(doc))
    r = cli("export", "perfetto", str(d), "-o", str(tmp_path / "m.json"))
    assert r.exit_code == 3 and "se0_sm0_sl0_wv0.json" in r.stderr and "wave.timeline" in r.stderr
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("words, existing", [(("export", "perfetto"), "trace.json"),
                                            (("report",), "report.html")])
def test_a_missing_input_is_reported_before_an_existing_default_output(cli, tmp_path, monkeypatch,
                                                                     words, existing):
    monkeypatch.chdir(tmp_path)
    (tmp_path / existing).write_text("mine")
    missing = tmp_path / "no-such-capture"
    r = cli(*words, str(missing))
    assert r.exit_code == 3
    assert f"{missing}: no such file or directory" in r.stderr and "already exists" not in r.stderr
    assert (tmp_path / existing).read_text() == "mine"


def test_legacy_layout_is_refused(corpus, cli, tmp_path):
    r = cli("export", "perfetto", str(corpus / "att/other/legacy_pre3_ui"), "-o", str(tmp_path / "t.json"))
    assert r.exit_code == 3 and "legacy" in r.stderr
