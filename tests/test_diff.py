"""hotspot diff: self-diff is quiet, a fixed variant moves the right rows, moved lines match by
mnemonics, saved JSON inputs work, replicate dispatches set the noise floor."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_waits import PROGRAM
from tests.test_wavepass_builder import (
    IMMED,
    MESSAGE,
    SMEM,
    VALU,
    VMEM,
    Schedule,
    W,
    build_dispatch,
)


def _records(begin: int, wait5: int) -> list[list[int]]:
    return (Schedule(begin).op(1, SMEM).op(2, VMEM).op(3, VMEM, stall=4).op(4, VALU)
            .op(5, IMMED, stall=wait5).op(6, IMMED, stall=50).op(7, IMMED, stall=10)
            .op(8, MESSAGE).records)


def _dispatch(d: Path, wait5: int, program=PROGRAM) -> Path:
    return build_dispatch(d, program, [W(_records(0, wait5), 0, simd=0),
                                       W(_records(0, wait5), 0, simd=1)])


def _rows(run) -> dict[str, dict]:
    assert run.exit_code == 0, run.stderr
    return {r["key"]: r for r in run.json()["data"]["rows"]}


def test_self_diff_has_no_significant_change(cli, tmp_path):
    d = _dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 400)
    run = cli("diff", d, d, "--format", "json")
    rows = _rows(run)
    assert rows and not any(r["significant"] for r in rows.values())
    assert all(r["delta"] == 0 for r in rows.values())
    data = run.json()["data"]
    assert data["summary"]["verdict"] == "no significant change"
    assert data["noise"]["method"] == "default-threshold"
    assert {r["kind"] for r in rows.values()} == {"total", "category", "line", "load"}
    text = cli("diff", d, d)
    assert text.exit_code == 0 and "within noise" in text.stdout


def test_fixed_variant_moves_cycles_on_the_right_rows(cli, tmp_path):
    before = _dispatch(tmp_path / "before" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "after" / "ui_output_agent_1_dispatch_9", 40)
    rows = _rows(cli("diff", before, after, "--format", "json"))
    moved = -2 * 360  # two waves, wait 5 from 400 to 40 cycles
    for key in ("total:stall", "category:wait-vmcnt", "line:/src/k.py:23", "load:/src/k.py:20"):
        assert rows[key]["delta"] == moved and rows[key]["significant"], key
    assert rows["line:/src/k.py:23"]["before"] == 2 * (400 + 50)
    assert rows["line:/src/k.py:23"]["delta_pct"] == pytest.approx(100 * moved / 900)
    significant = {k for k, r in rows.items() if r["significant"]}
    assert significant == {"total:stall", "total:latency", "category:wait-vmcnt",
                           "line:/src/k.py:23", "load:/src/k.py:20"}
    assert rows["line:/src/k.py:24"]["delta"] == 0


def test_moved_lines_match_by_mnemonic_sequence(cli, tmp_path):
    shifted = [(isa, src.replace(f":{src.rsplit(':', 1)[1]}", f":{int(src.rsplit(':', 1)[1]) + 100}"))
               for isa, src in PROGRAM]
    before = _dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 40, shifted)
    data = cli("diff", before, after, "--format", "json").json()["data"]
    lines = {r["label"]: r for r in data["rows"] if r["kind"] == "line"}
    row = lines["/src/k.py:23 -> /src/k.py:123"]
    assert row["matched_by"] == "mnemonics" and row["delta"] == -720 and row["significant"]
    assert lines["/src/k.py:20 -> /src/k.py:120"]["matched_by"] == "mnemonics"
    assert not any(r["matched_by"] in ("before-only", "after-only") for r in data["rows"])


def test_saved_analyze_json_is_an_input(cli, tmp_path):
    before = _dispatch(tmp_path / "before" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "after" / "ui_output_agent_1_dispatch_1", 40)
    saved = tmp_path / "before.json"
    saved.write_text(cli("analyze", before, "--format", "json", "--topk", "0").stdout)
    from_json = _rows(cli("diff", saved, after, "--format", "json"))
    from_dir = _rows(cli("diff", before, after, "--format", "json"))
    assert {k: (r["delta"], r["significant"]) for k, r in from_json.items()} == \
        {k: (r["delta"], r["significant"]) for k, r in from_dir.items()}
    bad = tmp_path / "bad.json"
    bad.write_text('{"command": "pmc", "ok": true, "data": {}}')
    run = cli("diff", bad, after)
    assert run.exit_code == 3 and "bad.json" in run.stderr


def test_replicate_dispatches_set_the_noise_floor(cli, tmp_path):
    before = tmp_path / "before"
    _dispatch(before / "ui_output_agent_1_dispatch_1", 400)
    _dispatch(before / "ui_output_agent_1_dispatch_2", 440)
    after = _dispatch(tmp_path / "after" / "ui_output_agent_1_dispatch_5", 450)
    run = cli("diff", before, after, "--format", "json")
    data = run.json()["data"]
    assert data["noise"]["method"] == "replicate-dispatches"
    assert len(data["before"]["dispatches"]) == 2
    row = {r["key"]: r for r in data["rows"]}["line:/src/k.py:23"]
    # before mean (900 + 980) / 2 = 940, after 1000: +60 is under the replicates' 80-cycle spread
    assert row["before"] == 940 and row["after"] == 1000 and not row["significant"]
    assert row["threshold"] >= 80
    # without the replicate, the default 5% threshold calls the same +100 significant
    single = {r["key"]: r for r in _rows_of(cli, before / "ui_output_agent_1_dispatch_1", after)}
    assert single["line:/src/k.py:23"]["significant"]


def _rows_of(cli, b, a):
    return cli("diff", b, a, "--format", "json").json()["data"]["rows"]


def test_corpus_self_diff(corpus, cli):
    d = corpus / "att/gfx950/vec_add"
    run = cli("diff", d, d, "--format", "json")
    assert run.exit_code == 0
    data = run.json()["data"]
    assert data["summary"]["significant"] == 0
    assert any(r["kind"] == "load" for r in data["rows"])


def _waves_dispatch(d: Path, wait5: int, n: int) -> Path:
    return build_dispatch(d, PROGRAM, [W(_records(0, wait5), 0, simd=i % 4, slot=i // 4, n=i)
                                       for i in range(n)])


def test_different_wave_counts_compare_per_wave(cli, tmp_path):
    # the same kernel and the same per-wave behaviour, traced with 12 waves and with 4: not a change
    twelve = _waves_dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400, 12)
    four = _waves_dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 400, 4)
    run = cli("diff", twelve, four, "--format", "json")
    data = run.json()["data"]
    assert data["normalization"] == "per-wave" and data["unit"] == "cycles per wave"
    rows = _rows(run)
    per_wave_stall = rows["total:stall"]["before"]
    assert per_wave_stall == rows["total:stall"]["after"] > 0
    assert not any(r["significant"] for r in rows.values())
    assert data["summary"]["verdict"] == "no significant change"
    # a real per-wave change still shows: wait 5 from 400 to 40 cycles per wave
    fixed = _waves_dispatch(tmp_path / "f" / "ui_output_agent_1_dispatch_1", 40, 4)
    rows = _rows(cli("diff", twelve, fixed, "--format", "json"))
    assert rows["line:/src/k.py:23"]["delta"] == -360 and rows["line:/src/k.py:23"]["significant"]


def test_cross_kernel_diff_is_never_significant(cli, tmp_path):
    before = _dispatch(tmp_path / "before" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "after" / "ui_output_agent_1_dispatch_1", 40)
    saved = tmp_path / "other.json"
    doc = cli("analyze", after, "--format", "json", "--topk", "0").json()
    doc["data"]["dispatch"]["kernel"] = "another_kernel"
    import json

    saved.write_text(json.dumps(doc))
    run = cli("diff", before, saved, "--format", "json")
    data = run.json()["data"]
    assert data["comparable"] is False
    assert not any(r["significant"] for r in data["rows"])
    assert any(r["delta"] != 0 for r in data["rows"])  # the numbers are still shown
    assert data["summary"]["verdict"].startswith("different kernels: not comparable")
