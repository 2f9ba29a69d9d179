"""The truth table is well-formed: every entry has the fixed fields, names rule ids that
docs/plan-rules.md defines, points at a capture that exists, and each synthetic maker plants the
pattern its entry describes (checked on the written wave files, not through the analysis)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import corpus_path
from tests.truth import synth

TRUTH = Path(__file__).parent
ROOT = TRUTH.parent.parent
FAMILIES = {"kernel-arguments", "exposed-load-latency", "lds-latency-before-mfma", "mfma-dependency",
            "memory-bandwidth-bound", "launch-underfill", "occupancy", "barrier-imbalance", "store-ordering",
            "valu-dependency", "narrow-loads", "cross-lane", "spin-wait", "mfma-shape", "register-spill",
            "matrix-core-bound", "pingpong-barrier", "store-epilogue", "streaming-saturated", "other"}
# Rule ids issue 33 names for mechanisms that have no rule yet: entries are written before the rule
# (README, "How an entry is written"). Drop an id here once docs/plan-rules.md defines it.
ANNOUNCED_RULES = {"register-spill", "matrix-core-bound", "pingpong-barrier", "store-epilogue",
                   "streaming-saturated"}
TRUST = {"ok", "limited", "unrepresentative"}
TOP_FIELDS = {"id", "capture", "trust", "trust_reasons", "trust_why", "item1", "not_item1", "not_item1_why",
              "tool_disagrees", "reviewed"}
ENTRIES = sorted(TRUTH.glob("*.yaml"))


def _rule_ids() -> set[str]:
    """Ids in the first column of docs/plan-rules.md's rule tables (`| \\`id\\` | ...`)."""
    text = (ROOT / "docs" / "plan-rules.md").read_text()
    return set(re.findall(r"^\|\s*`([a-z0-9-]+)`\s*\|", text, flags=re.M)) | ANNOUNCED_RULES


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_there_is_an_entry_per_capture_kind() -> None:
    captures = [_load(p)["capture"] for p in ENTRIES]
    assert "example" in captures
    assert sum(c.startswith("synth:") for c in captures) >= 3
    assert sum(c.startswith("corpus:") for c in captures) >= 13


@pytest.mark.parametrize("path", ENTRIES, ids=[p.stem for p in ENTRIES])
def test_entry_is_well_formed(path: Path) -> None:
    e = _load(path)
    rules = _rule_ids()
    assert e["id"] == path.stem and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", e["id"])
    assert TOP_FIELDS <= set(e), TOP_FIELDS - set(e)
    assert e["trust"] in TRUST
    assert all(isinstance(t, str) and t for t in e["trust_reasons"])
    assert e["trust_why"].strip()
    unknown = [r for r in e["not_item1"] if r not in rules]
    assert not unknown, f"not_item1 names ids docs/plan-rules.md does not define: {unknown}"
    item = e["item1"]
    if item is None:
        return
    assert item["family"] in FAMILIES
    assert item["accept"] and all(r in rules for r in item["accept"]), item["accept"]
    assert not set(item["accept"]) & set(e["not_item1"])
    assert all(isinstance(r, int) and r > 0 for r in item["rows"])
    assert item["gain"].strip() and item["why"].strip()


@pytest.mark.parametrize("path", [p for p in ENTRIES if _load(p)["capture"].startswith("corpus:")],
                         ids=lambda p: p.stem)
def test_corpus_capture_exists(path: Path, corpus: Path) -> None:
    e = _load(path)
    rel = e["capture"][len("corpus:"):]
    base = corpus_path(*rel.split("/"))
    assert (base / "code.json").is_file()
    if e.get("meta"):
        assert corpus_path(*e["meta"][len("corpus:"):].split("/")).is_dir()
    rows = (e["item1"] or {}).get("rows") or []
    if rows:  # every row the entry names is a real code row of that capture
        code_rows = {r[2] for r in json.loads((base / "code.json").read_text())["code"]}
        assert set(rows) <= code_rows, sorted(set(rows) - code_rows)


def _waves(d: Path) -> list[dict]:
    return [json.loads(p.read_text())["wave"] for p in sorted(d.glob("se*_sm*_sl*_wv*.json"))]


def _isa(d: Path) -> dict[int, str]:
    return {r[2]: r[0] for r in json.loads((d / "code.json").read_text())["code"]}


def test_every_synth_capture_has_a_maker() -> None:
    names = {_load(p)["capture"][len("synth:"):] for p in ENTRIES if _load(p)["capture"].startswith("synth:")}
    assert names == set(synth.MAKERS)
    for name, make in synth.MAKERS.items():
        assert make.__name__ == "make_" + name.replace("-", "_")


def test_early_exit_plant(tmp_path: Path) -> None:
    d = synth.make_early_exit(tmp_path)
    isa = _isa(d)
    waves = _waves(d)
    idle = [w for w in waves if len(w["instructions"]) <= 12]
    assert len(waves) == 64 and len(idle) >= 48          # most waves retire at once
    last = max(isa)
    assert isa[last] == "s_endpgm"
    for w in idle:  # straight from the range check to s_endpgm
        lines = [r[4] for r in w["instructions"]]
        assert lines[-2:] == [9, last]
    working = [w for w in waves if w not in idle]
    assert working and all(13 in [r[4] for r in w["instructions"]] for w in working)


def test_streaming_first_load_plant(tmp_path: Path) -> None:
    d = synth.make_streaming_first_load(tmp_path)
    isa = _isa(d)
    loads = [n for n, s in isa.items() if s.startswith("buffer_load")]
    assert loads == [5] and isa[4].startswith("s_waitcnt lgkmcnt") and isa[6] == "s_waitcnt vmcnt(0)"
    trace = (d.parent / "truth_kernel_trace.csv").read_text().splitlines()
    assert len(trace) == 2 and ",1,3,\"truth_kernel_0\"" in trace[1]


def test_load_after_store_plant(tmp_path: Path) -> None:
    d = synth.make_load_after_store(tmp_path)
    isa = _isa(d)
    assert isa[16].startswith("buffer_store") and isa[17].startswith("buffer_load") and isa[19] == "s_waitcnt vmcnt(0)"
    # the load's operands (v8 and s[8:11]) are ready before the loop: nothing in #4-#15 writes them
    assert not any(re.match(r"\S+ (v8|s\[8:11\]|s8|s9|s10|s11)[,\s]", isa[n]) for n in range(4, 16))


def test_launch_ambiguous_plant(tmp_path: Path) -> None:
    d = synth.make_launch_ambiguous(tmp_path)
    rows = (d.parent / "truth_kernel_trace.csv").read_text().splitlines()[1:]
    grids = {r.split(",")[-3] for r in rows}
    ids = {r.split(",")[5] for r in rows}
    assert len(grids) == 3 and "1" not in ids   # several shapes, none with this dispatch's id (1)


def test_runtime_fill_plant(tmp_path: Path) -> None:
    d = synth.make_runtime_fill(tmp_path)
    assert _isa(d)[0] == "; __amd_rocclr_fillBufferAligned"


def _rows(d: Path) -> dict[int, dict]:
    return {r[2]: {"isa": r[0], "hit": r[6], "stall": r[8]} for r in json.loads((d / "code.json").read_text())["code"]}


def _branch_target(d: Path, row: int) -> int:
    """The code row a branch at `row` jumps to, from its SIMM16 and the Vaddr column."""
    code = json.loads((d / "code.json").read_text())["code"]
    by_addr = {r[5]: r[2] for r in code}
    r = next(r for r in code if r[2] == row)
    simm = int(r[0].split()[1])
    simm -= 0x10000 if simm >= 0x8000 else 0
    return by_addr[r[5] + 4 + 4 * simm]


def test_spilled_loop_plant(tmp_path: Path) -> None:
    d = synth.make_spilled_loop(tmp_path)
    rows = _rows(d)
    assert _branch_target(d, 44) == 14
    for wait, reload in ((18, 17), (22, 21), (32, 31), (39, 38)):
        assert rows[reload]["isa"].startswith("scratch_load") and rows[wait]["isa"] == "s_waitcnt vmcnt(0)"
    # the first reload wait drains the prefetch issued before it: nothing waits between them
    assert rows[14]["isa"].startswith("buffer_load") and rows[15]["isa"].startswith("buffer_load")
    assert not any(rows[n]["isa"].startswith("s_waitcnt") for n in (16, 17))
    total = sum(r["stall"] for r in rows.values())
    assert sum(rows[n]["stall"] for n in (18, 22, 32, 39)) > 0.8 * total
    assert any("v255" in r["isa"] or "v[252:255]" in r["isa"] for r in rows.values())   # 256 VGPRs in use


def _mfma_busy_per_simd(d: Path, first: int, last: int, passes: int) -> float:
    """Matrix-core cycles (executions x passes x 4) over the loop's span, summed over the waves of each
    SIMD: waves that share a SIMD share its matrix core."""
    isa = _isa(d)
    busy, span = {}, {}
    for p in sorted(d.glob("se*_sm*_sl*_wv*.json")):
        w = json.loads(p.read_text())["wave"]
        loop = [r for r in w["instructions"] if first <= r[4] <= last]
        key = p.name.split("_sl")[0]
        busy[key] = busy.get(key, 0) + sum(passes * 4 for r in loop if isa[r[4]].startswith("v_mfma"))
        lo, hi = loop[0][0], loop[-1][0] + loop[-1][3]
        span.setdefault(key, []).append((lo, hi))
    # a SIMD's loop time: the union of its waves' loop spans
    total = 0
    for key, spans in span.items():
        spans.sort()
        cur_lo, cur_hi = spans[0]
        for lo, hi in spans[1:]:
            if lo > cur_hi:
                total += cur_hi - cur_lo
                cur_lo, cur_hi = lo, hi
            else:
                cur_hi = max(cur_hi, hi)
        total += cur_hi - cur_lo
    return sum(busy.values()) / total


def test_mfma_bound_plant(tmp_path: Path) -> None:
    d = synth.make_mfma_bound(tmp_path)
    isa = _isa(d)
    assert _branch_target(d, 74) == 15
    assert sum(isa[n].startswith("v_mfma_f32_32x32x16_bf16") for n in range(15, 75)) == 32
    assert 0.92 <= _mfma_busy_per_simd(d, 15, 74, 8) <= 0.98


def test_pingpong_plant(tmp_path: Path) -> None:
    d = synth.make_pingpong(tmp_path)
    rows = _rows(d)
    assert _branch_target(d, 19) == 21 and _branch_target(d, 89) == 91 and _branch_target(d, 86) == 23
    waves = _waves(d)
    lines = [{r[4] for r in w["instructions"]} for w in waves]
    second = [w for w, ls in zip(waves, lines) if 20 in ls]
    first = [w for w, ls in zip(waves, lines) if 90 in ls]
    assert len(second) == len(first) == len(waves) // 2          # each half one extra barrier
    assert {w["slot"] for w in second} == {1} and {w["slot"] for w in first} == {0}
    assert rows[48]["isa"] == rows[83]["isa"] == "s_barrier"
    assert all(rows[n]["isa"].startswith("v_mfma") for n in range(50, 82))    # #83 follows the cluster
    assert rows[47]["isa"].startswith("s_waitcnt lgkmcnt") and rows[38]["isa"].startswith("ds_read")
    assert rows[48]["stall"] > rows[83]["stall"] > 0
    assert 0.6 <= _mfma_busy_per_simd(d, 23, 86, 4) <= 1.0


def test_backward_branch_plant(tmp_path: Path) -> None:
    d = synth.make_backward_branch(tmp_path)
    rows = _rows(d)
    assert _branch_target(d, 7) == 33 and _branch_target(d, 43) == 8 and _branch_target(d, 27) == 8
    assert rows[32]["isa"] == "s_endpgm" and rows[43]["isa"].startswith("s_branch")
    waves = _waves(d)
    for w in waves:   # the backward s_branch is taken exactly once per wave, the real back edge 11 times
        ls = [r[4] for r in w["instructions"]]
        assert ls.count(43) == 1 and ls.count(38) == 1 and ls.count(27) == 12 and ls[-1] == 32
    assert rows[33]["isa"].startswith("buffer_load") and rows[38]["isa"] == "s_waitcnt vmcnt(0)"


def test_store_epilogue_plant(tmp_path: Path) -> None:
    d = synth.make_store_epilogue(tmp_path)
    rows = _rows(d)
    stores = [n for n, r in rows.items() if r["isa"].startswith("global_store_dwordx2")]
    assert len(stores) == 16 and all(rows[n]["hit"] == 32 for n in stores)
    total = sum(r["stall"] for r in rows.values())
    by_class: dict[str, int] = {}
    for r in rows.values():
        cls = ("store" if "store" in r["isa"] else "mfma" if r["isa"].startswith("v_mfma")
               else "wait" if r["isa"].startswith("s_waitcnt") else "other")
        by_class[cls] = by_class.get(cls, 0) + r["stall"]
    assert max(by_class, key=lambda k: by_class[k]) == "store" and by_class["store"] > 0.3 * total
    for n in stores:   # the next store's address is 8 KiB further: 4 rows of a 2 KiB row stride
        assert rows[n + 1]["isa"] == "v_add_co_u32_e32 v60, vcc, 0x2000, v60"
    assert rows[5]["isa"] == "v_lshlrev_b32_e32 v62, 11, v61"


def test_streaming_saturated_plant(tmp_path: Path) -> None:
    d = synth.make_streaming_saturated(tmp_path)
    isa = _isa(d)
    assert [n for n, s in isa.items() if s.startswith("buffer_load")] == [6]
    assert [n for n, s in isa.items() if s.startswith("buffer_store")] == [10]
    waves = _waves(d)
    assert {w["slot"] for w in waves} == set(range(8))            # 8 wave slots per SIMD in use
    row = (d.parent / "truth_kernel_trace.csv").read_text().splitlines()[1].split(",")
    workgroups = int(row[-3]) // int(row[-6])
    seconds = (int(row[10]) - int(row[9])) * 1e-9
    moved = workgroups * 256 * (16 + 16)                           # one 16-byte load and store per lane
    assert 0.80 <= moved / seconds / 8.0e12 <= 0.90                # MI350X peak HBM 8 TB/s (HARDWARE.md §5)

