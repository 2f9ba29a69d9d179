"""Occupancy inside hotspot analyze: resources and their sources, theoretical vs achieved."""

from __future__ import annotations

import pytest

from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch

# The same corpus captures are analyzed by several tests and commands here: their wave pass is
# made once per test process (tests/conftest.py shared_analyses).
pytestmark = pytest.mark.usefixtures("shared_analyses")


def test_ck_bmm_uses_rocpd_resources(corpus, cli):
    data = cli("analyze", corpus / "att/gfx942/ck_bmm", "--format", "json").json()["data"]
    occ = data["occupancy"]
    assert occ["resources"]["vgpr"] == 128 and occ["resources"]["agpr"] == 384
    assert occ["resources"]["lds"] == 65536
    assert occ["resources"]["source"]["vgpr"].startswith("rocpd")
    assert occ["waves_per_simd"] == 1 and occ["limiter"] == "vgpr"
    assert occ["achieved"]["peak_waves_per_simd"] <= 1


@pytest.mark.parametrize("name", ["vec_add", "preshuffle_gemm_v2", "blockscale_preshuffle_gemm",
                                  "pa_mqa_logits_fp4_small", "mla_decode"])
def test_gfx950_dirs_report_arch_and_resource_sources(corpus, cli, name):
    run = cli("analyze", corpus / "att/gfx950" / name, "--format", "json")
    data = run.json()["data"]
    assert data["arch"]["gfx"] == "gfx950" and data["arch"]["source"].startswith("agent_info")
    occ = data["occupancy"]
    assert occ["available"] and 1 <= occ["waves_per_simd"] <= 8
    # every resource names where it came from
    assert set(occ["resources"]["source"]) >= {"vgpr", "sgpr", "wg_threads"}
    assert "kernel_trace" in occ["resources"]["source"]["wg_threads"]
    assert occ["achieved"]["mean_waves_per_simd"] > 0


def test_gfx950_register_halving_is_caught(corpus, cli):
    # preshuffle_gemm_v2's discovery CSV claims VGPR 52, Accum 0, but the ISA uses v0..v99
    run = cli("analyze", corpus / "att/gfx950/preshuffle_gemm_v2", "--format", "json")
    occ = run.json()["data"]["occupancy"]
    assert occ["resources"]["vgpr"] == 100 and occ["resources"]["source"]["vgpr"] == "isa"
    assert any("trusting the ISA" in w for w in run.json()["warnings"])


def test_unknown_arch_shows_each_candidate(tmp_path, cli):
    d = make_dispatch(tmp_path, DispatchSpec(arch="gfx942", program=InstructionMix(loop_trips=2),
                                             waves=4), seed=1)
    run = cli("analyze", d, "--format", "json")
    data = run.json()["data"]
    assert data["arch"]["known"] is False and data["arch"]["gfx"] == "gfx9 (variant unknown)"
    occ = data["occupancy"]
    assert set(occ["candidates"]["by_arch"]) == {"gfx942", "gfx950"}
    assert any("architecture not determined" in w for w in run.json()["warnings"])
