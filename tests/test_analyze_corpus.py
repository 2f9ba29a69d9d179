"""hotspot analyze on every real dispatch dir of the corpus (skips when the corpus is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# The same corpus captures are analyzed by several tests and commands here: their wave pass is
# made once per test process (tests/conftest.py shared_analyses).
pytestmark = pytest.mark.usefixtures("shared_analyses")

DISPATCH_DIRS = [
    "att/gfx950/vec_add",
    "att/gfx950/preshuffle_gemm_v2",
    "att/gfx950/blockscale_preshuffle_gemm",
    "att/gfx950/pa_mqa_logits_fp4_small",
    "att/gfx950/mla_decode",
    "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_1",
    "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_2",
]


def _column_sums(code_json: Path) -> dict[str, int]:
    """Independent of hotspot: plain json + the header's column names."""
    doc = json.loads(code_json.read_text())
    names = [h.strip() for h in doc["header"].split(",")] if isinstance(doc["header"], str) else doc["header"]
    idx = {n: i for i, n in enumerate(names)}
    rows = [r for r in doc["code"] if not r[0].startswith(";")]
    return {k.lower(): sum(r[idx[k]] for r in rows) for k in ("Hit", "Latency", "Stall", "Idle")}


def _kernel_names(code_json: Path) -> set[str]:
    doc = json.loads(code_json.read_text())
    out = set()
    for r in doc["code"]:
        if r[0].startswith(";"):
            out.add(r[0][1:].strip())
            if r[3]:
                out.add(r[3])
    return out


@pytest.mark.parametrize("rel", DISPATCH_DIRS)
def test_json_totals_equal_code_json_column_sums(corpus, cli, rel):
    d = corpus / rel
    run = cli("analyze", d, "--format", "json")
    assert run.exit_code == 0, run.stderr
    doc = run.json()
    assert doc["schema_version"] == 1 and doc["ok"] is True and doc["command"] == "analyze"
    data = doc["data"]
    sums = _column_sums(d / "code.json")
    for key in ("hit", "latency", "stall", "idle"):
        assert data["totals"][key] == sums[key], key
    assert data["totals"]["issue"] == sums["latency"] - sums["stall"]
    assert data["dispatch"]["kernel"] in _kernel_names(d / "code.json")
    # shares of all categories add up to the whole stall
    assert sum(c["stall"] for c in data["stall_by_category"]) == sums["stall"]
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("rel", DISPATCH_DIRS)
def test_text_and_markdown_render(corpus, cli, rel):
    for fmt in ("text", "markdown"):
        run = cli("analyze", corpus / rel, "--format", fmt, "--detail")
        assert run.exit_code == 0, run.stderr
        assert "Stall by category" in run.stdout


def test_vec_add_known_facts(corpus, cli):
    data = cli("analyze", corpus / "att/gfx950/vec_add", "--format", "json", "--topk", "0").json()["data"]
    assert data["dispatch"]["waves"] == 632
    assert data["dispatch"]["code_rows"] == 22 and data["dispatch"]["executed_instructions"] == 22
    assert data["dispatch"]["source_mapped_pct"] == 100.0
    assert data["totals"]["stall"] == 2_101_364 and data["totals"]["latency"] == 3_729_624
    assert data["arch"]["gfx"] == "gfx950"
    assert "agent_info" in data["arch"]["source"]
    assert data["arch"]["product"] == "AMD Instinct MI350X"
    # wave files agree with code.json on this capture: no wave-mismatch finding
    assert "wave-mismatch" not in {f["id"] for f in data["findings"]}
    top = data["instructions"][0]
    assert top["isa"] == "s_waitcnt vmcnt(0)" and top["category"] == "wait-vmcnt"
    assert top["stall"] == 1_728_428


def test_ck_bmm_arch_from_rocpd_and_best_dispatch(corpus, cli):
    run = cli("analyze", corpus / "att/gfx942/ck_bmm", "--format", "json")
    data = run.json()["data"]
    assert data["arch"]["gfx"] == "gfx942"
    assert data["arch"]["source"].startswith("rocpd")
    assert data["arch"]["product"] == "AMD Instinct MI300X"
    # dispatch 2 (the CK GEMM) executed more instructions than the rocclr fill
    assert data["dispatch"]["dispatch_id"] == 2 and data["dispatch"]["agent_handle"] == 5600
    assert data["dispatch"]["kernel"].startswith("void ck_tile::kentry<1, ck_tile::BatchedGemmKernel")
    assert data["selection"]["chosen"].endswith("ui_output_agent_5600_dispatch_2")
    assert len(data["selection"]["candidates"]) == 2


def test_ck_bmm_all(corpus, cli):
    data = cli("analyze", corpus / "att/gfx942/ck_bmm", "--all", "--format", "json").json()["data"]
    assert [Path(a["dispatch"]["path"]).name for a in data["dispatches"]] == [
        "ui_output_agent_5600_dispatch_2", "ui_output_agent_5600_dispatch_1"]


def test_mla_decode_is_an_idle_slice(corpus, cli):
    data = cli("analyze", corpus / "att/gfx950/mla_decode", "--format", "json").json()["data"]
    assert data["dispatch"]["code_rows"] == 4948 and data["dispatch"]["executed_instructions"] == 17
    assert "idle-slice" in {f["id"] for f in data["findings"]}


def test_pa_mqa_has_no_source(corpus, cli):
    data = cli("analyze", corpus / "att/gfx950/pa_mqa_logits_fp4_small", "--format", "json").json()["data"]
    assert data["dispatch"]["source_mapped_pct"] == 0.0
    assert data["source_lines"] == []
    assert "no-source" in {f["id"] for f in data["findings"]}


def test_pc_sampling_counts_samples(corpus, cli):
    d = corpus / "att/other/pcsampling_code_json"
    data = cli("analyze", d, "--format", "json", "--arch", "gfx942").json()["data"]
    assert data["mode"] == "pc-sampling"
    doc = json.loads((d / "code.json").read_text())
    idx = {n: i for i, n in enumerate(doc["header"])}
    issued = sum(r[idx["PC_Issued"]] for r in doc["code"])
    stalled = sum(r[idx["PC_Stalled"]] for r in doc["code"])
    assert data["samples"]["issued"] == issued and data["samples"]["stalled"] == stalled
    assert sum(data["samples"]["stall_reasons"].values()) == stalled
    assert data["totals"]["stall"] == stalled


def test_legacy_layout_is_refused(corpus, cli):
    run = cli("analyze", corpus / "att/other/legacy_pre3_ui", "--format", "json")
    assert run.exit_code == 3
    assert "unsupported legacy ATT layout" in run.stderr
    assert run.json()["error"]["code"] == "legacy-layout"
    assert "Traceback" not in run.stderr
