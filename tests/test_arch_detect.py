"""Arch detection: each evidence source in its order of trust, and no confident wrong answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hotspot.capture.target import UNKNOWN_LABEL, detect_arch

AGENT_HEADER = '"Node_Id","Agent_Type","Name","Product_Name","Gfx_Target_Version"\n'


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """Each test's capture folder three levels below its own temporary folder: the side-file
    search climbs up to three levels, and must find only what this test wrote (pytest keeps the
    folders of earlier tests, with their agent_info files, beside it)."""
    root = tmp_path / "runs" / "today" / "job"
    root.mkdir(parents=True)
    return root


def _dispatch(root: Path) -> Path:
    d = root / "ui_output_agent_300_dispatch_2"
    d.mkdir(parents=True)
    return d


def test_override_wins(tmp_path):
    info = detect_arch(_dispatch(tmp_path), override="GFX942")
    assert (info.gfx, info.source) == ("gfx942", "--arch")


def test_agent_info_in_hostname_subfolder(tmp_path):
    d = _dispatch(tmp_path)
    host = tmp_path / "node17"
    host.mkdir()
    (host / "1234_agent_info.csv").write_text(
        AGENT_HEADER + '0,"CPU","AMD EPYC","AMD EPYC",0\n1,"GPU","gfx950","AMD Instinct MI355X",90500\n')
    info = detect_arch(d)
    assert info.gfx == "gfx950" and info.product == "AMD Instinct MI355X"
    assert info.source.startswith("agent_info") and "node17" in info.source


def test_disagreeing_agent_info_is_not_used(tmp_path):
    d = _dispatch(tmp_path)
    (tmp_path / "x_agent_info.csv").write_text(
        AGENT_HEADER + '1,"GPU","gfx950","MI350X",90500\n2,"GPU","gfx942","MI300X",90402\n')
    info = detect_arch(d)
    assert info.gfx is None and info.label == UNKNOWN_LABEL
    assert any("several GPU architectures" in w for w in info.warnings)


def test_results_json(tmp_path):
    d = _dispatch(tmp_path)
    doc = {"rocprofiler-sdk-tool": [{"agents": [{"type": 1, "name": "EPYC"},
                                                {"type": 2, "name": "gfx942", "product_name": "AMD Instinct MI300X"}]}]}
    (tmp_path / "out_results.json").write_text(json.dumps(doc))
    info = detect_arch(d)
    assert (info.gfx, info.product) == ("gfx942", "AMD Instinct MI300X")
    assert info.source.startswith("results.json")


def test_code_object_file_name(tmp_path):
    d = _dispatch(tmp_path)
    (tmp_path / "out_gfx942_code_object_id_3.out").write_bytes(b"\x7fELF")
    info = detect_arch(d)
    assert info.gfx == "gfx942" and info.source.startswith("code object name")


def test_isa_alone_decides_and_only_proves_gfx950(tmp_path):
    d = _dispatch(tmp_path)
    info = detect_arch(d, ["v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]"])
    assert info.gfx == "gfx950" and info.source == "ISA: v_mfma_f32_16x16x32_bf16 exists only on gfx950"
    # a gfx942-era instruction proves nothing: variant unknown, with a warning
    info = detect_arch(d, ["v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]"])
    assert info.gfx is None and info.candidates == ("gfx942", "gfx950")
    assert info.warnings


def test_nearest_source_first(tmp_path):
    d = _dispatch(tmp_path)
    (tmp_path / "out_gfx942_code_object_id_1.out").write_bytes(b"")
    (tmp_path / "a_agent_info.csv").write_text(AGENT_HEADER + '1,"GPU","gfx950","MI350X",90500\n')
    assert detect_arch(d).gfx == "gfx950"  # agent_info outranks code object names
