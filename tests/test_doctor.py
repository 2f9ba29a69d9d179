"""`hotspot doctor`: missing tools are exit 5 with the fix; with the fake on PATH everything passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from hotspot.collect import rocm_tools as tools
from tests.fake_rocprofv3.helpers import clean_env, fake  # noqa: F401  (fixture)


def test_doctor_without_rocm_is_exit_5_with_the_fix(cli, monkeypatch, tmp_path):
    clean_env(monkeypatch, tmp_path, with_fake=False)
    res = cli("doctor", "--format", "json")
    assert res.exit_code == 5
    doc = res.json()
    assert doc["ok"] is False and doc["error"]["code"] == "tool-missing"
    assert "rocprofv3 not found" in doc["error"]["message"]
    assert "--rocprofv3" in doc["error"]["hint"] and "ROCM_PATH" in doc["error"]["hint"]
    checks = {c["name"]: c for c in doc["error"]["details"]["doctor"]["checks"]}
    assert checks["rocprofv3"]["status"] == "fail" and checks["rocprofv3"]["fix"] == tools.FIX_ROCPROFV3
    assert checks["trace decoder"]["status"] == "fail" and "--att-library-path" in checks["trace decoder"]["fix"]


def test_doctor_subprocess_has_no_traceback(tmp_path):
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "HOME": str(tmp_path),
           "ROCM_PATH": str(tmp_path / "none")}
    done = subprocess.run([sys.executable, "-m", "hotspot", "doctor", "--format", "json"], env=env,
                          capture_output=True, timeout=60)
    if Path("/opt/rocm/bin/rocprofv3").exists():  # a real ROCm machine: nothing is missing there
        return
    assert done.returncode == 5
    assert orjson.loads(done.stdout)["error"]["code"] == "tool-missing"
    assert b"Traceback" not in done.stderr and done.stderr.count(b"\n") == 1


def test_doctor_text_shows_every_check_then_exits_5(cli, monkeypatch, tmp_path):
    clean_env(monkeypatch, tmp_path, with_fake=False)
    res = cli("doctor")
    assert res.exit_code == 5
    for name in ("rocprofv3", "trace decoder", "GPUs", "rocprofv3-doctor"):
        assert name in res.stdout
    assert "NOT ready" in res.stdout and res.stderr.startswith("hotspot doctor: ")


def test_doctor_with_the_fake_and_a_decoder_passes(cli, fake, monkeypatch):
    res = cli("doctor", "--format", "json")
    assert res.exit_code == 0, res.stderr
    data = res.json()["data"]
    assert data["ok"] and data["rocprofv3"]["version"] == "1.0.0"
    assert data["rocprofv3"]["path"].endswith("rocprofv3") and data["rocprofv3"]["found_by"] == "PATH"
    assert data["decoder"]["path"] == str(fake.decoder_dir.resolve())
    assert data["decoder"]["found_by"] == "ROCPROF_ATT_LIBRARY_PATH"


def test_decoder_search_order(monkeypatch, tmp_path, fake):
    other = tmp_path / "ld"
    other.mkdir()
    (other / "librocprof-trace-decoder.so.0.1").write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(other))
    assert tools.find_decoder().source == "ROCPROF_ATT_LIBRARY_PATH"
    monkeypatch.delenv("ROCPROF_ATT_LIBRARY_PATH")
    found = tools.find_decoder()
    assert found.source == "LD_LIBRARY_PATH" and found.path == str(other.resolve())
    assert tools.find_decoder(str(fake.decoder_dir)).source == "--att-library-path"
    # an explicit path that lacks the library is reported missing, not silently replaced
    assert tools.find_decoder(str(tmp_path / "nowhere")) is None
    rocm = tmp_path / "rocm"
    (rocm / "lib").mkdir(parents=True)
    (rocm / "lib" / "librocprof-trace-decoder.so").write_bytes(b"")
    monkeypatch.delenv("LD_LIBRARY_PATH")
    monkeypatch.setenv("ROCM_PATH", str(rocm))
    assert tools.find_decoder().path == str((rocm / "lib").resolve())


def test_rocprofv3_search_prefers_explicit_then_path_then_rocm(monkeypatch, tmp_path, fake):
    rocm = tmp_path / "rocm"
    (rocm / "bin").mkdir(parents=True)
    exe = rocm / "bin" / "rocprofv3"
    exe.write_text("#!/bin/sh\necho 'rocprofv3 version: 6.4.1'\n")
    exe.chmod(0o755)
    assert tools.find_rocprofv3().source == "PATH"
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    monkeypatch.setenv("ROCM_PATH", str(rocm))
    found = tools.find_rocprofv3()
    assert found.path == str(exe) and found.source == "$ROCM_PATH/bin"
    assert tools.rocprofv3_version(found.path)[0] == "6.4.1"
    assert tools.find_rocprofv3(str(tmp_path / "missing")) is None


ROCMINFO = """\
*******
Agent 1
*******
  Name:                    AMD EPYC 9575F 64-Core Processor
  Marketing Name:          AMD EPYC 9575F 64-Core Processor
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx942
  Uuid:                    GPU-abc
  Marketing Name:          AMD Instinct MI300X
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-
*******
Agent 3
*******
  Name:                    gfx942
  Marketing Name:          AMD Instinct MI300X
  Device Type:             GPU
"""


def test_parse_rocminfo_lists_gpu_agents_only():
    gpus = tools.parse_rocminfo(ROCMINFO)
    assert [(g.index, g.gfx, g.product) for g in gpus] == [(0, "gfx942", "AMD Instinct MI300X"),
                                                           (1, "gfx942", "AMD Instinct MI300X")]


def test_parse_rocm_smi():
    text = ("GPU[0]\t\t: Card Series: \t\tAMD Instinct MI350X\nGPU[0]\t\t: GFX Version: \t\tgfx950\n"
            "GPU[1]\t\t: Card Series: \t\tAMD Instinct MI350X\nGPU[1]\t\t: GFX Version: \t\tgfx950\n")
    assert [(g.index, g.gfx, g.product) for g in tools.parse_rocm_smi(text)] == [
        (0, "gfx950", "AMD Instinct MI350X"), (1, "gfx950", "AMD Instinct MI350X")]


def test_gpus_and_rocprofv3_doctor_are_included(cli, fake, monkeypatch, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    info = bin_dir / "rocminfo"
    info.write_text("#!/bin/sh\ncat <<'EOF'\n" + ROCMINFO + "EOF\n")
    doc = bin_dir / "rocprofv3-doctor"
    doc.write_text("#!/bin/sh\necho '{\"schema_version\": 1, \"checks\": [{\"name\": \"perf\", \"status\": \"warn\"}]}'\n"
                   "exit 1\n")
    for f in (info, doc):
        f.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ["PATH"])
    res = cli("doctor", "--format", "json")
    assert res.exit_code == 0, res.stderr
    data = res.json()["data"]
    assert [g["gfx"] for g in data["gpus"]] == ["gfx942", "gfx942"]
    assert data["rocprofv3_doctor"]["exit_code"] == 1
    assert data["rocprofv3_doctor"]["findings"]["checks"][0]["name"] == "perf"
    status = {c["name"]: c["status"] for c in data["checks"]}
    from hotspot.att.engine.native import native_status
    scanner = "pass" if native_status() == "enabled" else "warn"
    assert status == {"rocprofv3": "pass", "trace decoder": "pass", "GPUs": "pass", "rocprofv3-doctor": "warn",
                      "native wave scanner": scanner}


def test_doctor_without_rocm_says_analysis_is_ready(cli, monkeypatch, tmp_path):
    """No rocprofv3 anywhere: the default still exits 5 and says both verdicts; --for analyze exits
    0 with only the analysis verdict and no warnings about collection tools."""
    clean_env(monkeypatch, tmp_path, with_fake=False)
    assert tools.find_rocprofv3(None) is None
    default = cli("doctor")
    assert default.exit_code == 5
    assert "analysis: ready" in default.stdout
    assert "collection: NOT ready: required rocprofv3, trace decoder missing" in default.stdout
    analysis = cli("doctor", "--for", "analyze")
    assert analysis.exit_code == 0, analysis.stderr
    assert "analysis: ready" in analysis.stdout and "collection:" not in analysis.stdout
    assert "rocprofv3" in analysis.stdout  # the table still shows the check
    assert "warning: rocprofv3" not in analysis.stderr and "warning: trace decoder" not in analysis.stderr
    data = cli("doctor", "--for", "analyze", "--format", "json").json()["data"]
    assert data["ok"] is False and data["analysis_ready"] is True and data["checked_for"] == "analyze"
    assert data["missing"] == ["rocprofv3", "trace decoder"]
    collect = cli("doctor", "--for", "collect")
    assert collect.exit_code == 5 and "analysis:" not in collect.stdout
    bad = cli("doctor", "--for", "everything")
    assert bad.exit_code == 2 and "expected analyze or collect" in bad.stderr


def test_doctor_with_the_tools_says_both_ready(cli, fake):
    res = cli("doctor")
    assert res.exit_code == 0, res.stderr
    assert "analysis: ready" in res.stdout and "collection: " in res.stdout
