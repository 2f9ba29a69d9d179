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
            "valu-dependency", "narrow-loads", "cross-lane", "spin-wait", "mfma-shape", "other"}
TRUST = {"ok", "limited", "unrepresentative"}
TOP_FIELDS = {"id", "capture", "trust", "trust_reasons", "trust_why", "item1", "not_item1", "not_item1_why",
              "tool_disagrees", "reviewed"}
ENTRIES = sorted(TRUTH.glob("*.yaml"))


def _rule_ids() -> set[str]:
    """Ids in the first column of docs/plan-rules.md's rule tables (`| \\`id\\` | ...`)."""
    text = (ROOT / "docs" / "plan-rules.md").read_text()
    return set(re.findall(r"^\|\s*`([a-z0-9-]+)`\s*\|", text, flags=re.M))


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
