"""`hotspot occupancy` end to end: text, json, markdown, and bad input (one line, exit 2)."""

from __future__ import annotations

import pytest


def test_json_matches_the_model(cli):
    run = cli("occupancy", "--arch", "gfx942", "--vgpr", "144", "--agpr", "136", "--sgpr", "40",
              "--lds", "0", "--wg", "256", "--format", "json")
    assert run.exit_code == 0, run.stderr
    doc = run.json()
    assert doc["ok"] is True and doc["command"] == "occupancy"
    data = doc["data"]
    assert list(data)[:7] == ["arch", "inputs", "waves_per_simd", "limiter", "limiters", "limits", "next_step"]
    assert data["arch"] == "gfx942"
    assert data["inputs"] == {"vgpr": 144, "agpr": 136, "sgpr": 40, "lds_bytes": 0, "wg_threads": 256,
                              "sgpr_includes_implicit": False}
    assert data["waves_per_simd"] == 1 and data["limiter"] == "vgpr"
    # sgpr 40 + 6 = 46 → 48 → 800 // 48 = 16 → capped 8; 4-wave WGs: 8 slots → 8
    assert data["limits"] == {"hardware": 8, "vgpr": 1, "sgpr": 8, "lds": 8, "workgroup": 8}
    step = data["next_step"]["vgpr"]
    assert (step["target_waves"], step["max_allowed"], step["current"], step["reduce_by"]) == (2, 256, 280, 24)
    assert "2 waves/SIMD needs total VGPRs ≤ 256 (now 280): free 24" in step["message"]
    assert isinstance(data["notes"], list)
    assert run.stderr == ""


def test_text_marks_the_limiter_and_prints_next_steps(cli):
    run = cli("occupancy", "--arch", "gfx950", "--vgpr", "248", "--lds", "49152", "--wg", "256")
    assert run.exit_code == 0, run.stderr
    out = run.stdout
    assert "Occupancy on gfx950: 2 waves/SIMD (limiter: vgpr)" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.split()[:1]}
    assert "◀" in lines["vgpr"] and "◀" not in lines["lds"]
    assert "3 waves/SIMD needs total VGPRs ≤ 168 (now 248): free 80" in out
    assert "sgpr" in lines and "unknown" in lines["sgpr"]


def test_markdown(cli):
    run = cli("occupancy", "--arch", "gfx942", "--vgpr", "64", "--format", "markdown")
    assert run.exit_code == 0
    assert run.stdout.startswith("## Occupancy on gfx942: 8 waves/SIMD (limiter: hardware)")
    assert "| limit" in run.stdout


def test_product_name_as_arch(cli):
    run = cli("occupancy", "--arch", "MI355X", "--vgpr", "64", "--lds", "49152", "--wg", "256",
              "--format", "json")
    assert run.exit_code == 0
    assert run.json()["data"]["arch"] == "gfx950"


def test_sgpr_allocation_flag(cli):
    run = cli("occupancy", "--arch", "gfx942", "--vgpr", "128", "--agpr", "384", "--sgpr", "112",
              "--sgpr-includes-implicit", "--lds", "65536", "--wg", "256", "--format", "json")
    assert run.exit_code == 0, run.stderr
    data = run.json()["data"]
    assert data["waves_per_simd"] == 1 and data["limiter"] == "vgpr" and data["limiters"] == ["vgpr", "lds"]
    assert data["limits"]["sgpr"] == 7


@pytest.mark.parametrize("args,needle", [
    (["--arch", "gfx1100", "--vgpr", "10"], "unknown GPU architecture 'gfx1100'"),
    (["--arch", "gfx942", "--vgpr", "-1"], "vgpr -1 is out of range"),
    (["--arch", "gfx942", "--vgpr", "300"], "vgpr 300 is out of range 0..256"),
    (["--arch", "gfx942", "--vgpr", "10", "--agpr", "600"], "agpr 600 is out of range"),
    (["--arch", "gfx942", "--vgpr", "10", "--lds", "70000"], "lds_bytes 70000 is out of range"),
    (["--arch", "gfx942", "--vgpr", "10", "--wg", "2048"], "wg_threads 2048 is out of range"),
    (["--arch", "gfx942", "--vgpr", "10", "--sgpr", "110"], "sgpr 110 is out of range 0..102"),
])
def test_bad_input_is_one_line_exit_2(cli, args, needle):
    run = cli("occupancy", *args)
    assert run.exit_code == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hotspot occupancy: ") and needle in lines[0]
    assert "(next: " in lines[0]


def test_bad_input_json_envelope(cli):
    run = cli("occupancy", "--arch", "gfx942", "--vgpr", "300", "--format", "json")
    assert run.exit_code == 2
    doc = run.json()
    assert doc["ok"] is False and doc["error"]["exit_code"] == 2
    assert doc["error"]["message"].startswith("vgpr 300")
