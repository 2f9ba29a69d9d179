"""Bad input for hotspot analyze: one line, the right exit code, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

HEADER = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"


def _write(d: Path, code, waves: int = 0) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "code.json").write_text(json.dumps({"code": code, "header": HEADER, "version": "3.0.0"}))
    (d / "filenames.json").write_text(json.dumps({"gfxip": 9, "version": "3.0.0", "wave_filenames": {}}))
    return d


def test_code_null_is_an_empty_trace(tmp_path, cli):
    d = _write(tmp_path / "ui_output_agent_300_dispatch_7", None)
    run = cli("analyze", d)
    assert run.exit_code == 4
    assert "empty trace" in run.stderr
    for remedy in ("att_target_cu", "att_shader_engine_mask", "kernel_include_regex",
                   "kernel_iteration_range"):
        assert remedy in run.stderr
    assert "Traceback" not in run.stderr
    js = cli("analyze", d, "--format", "json")
    assert js.exit_code == 4 and js.json()["error"]["exit_code"] == 4


def test_rows_but_no_wave_files_is_an_empty_trace(tmp_path, cli):
    d = _write(tmp_path / "d", [["; k", 0, 0, "", 1, 0, 0, 0, 0, 0],
                                ["s_endpgm", 0, 1, "", 1, 4, 0, 0, 0, 0]])
    assert cli("analyze", d).exit_code == 4


def test_missing_path(tmp_path, cli):
    run = cli("analyze", tmp_path / "nope")
    assert run.exit_code == 3 and "no such file or directory" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_malformed_json_names_the_file(tmp_path, cli):
    d = tmp_path / "d"
    d.mkdir()
    (d / "code.json").write_text('{"code": [[1, 2')
    run = cli("analyze", d, "--format", "json")
    assert run.exit_code == 3
    assert str(d / "code.json") in run.stderr and "malformed JSON" in run.stderr
    assert run.json()["ok"] is False
    assert "Traceback" not in run.stderr


def test_wrong_field_type_names_field(tmp_path, cli):
    d = _write(tmp_path / "d", [["s_endpgm", 0, 1, "", 1, 4, "many", 0, 0, 0]])
    run = cli("analyze", d)
    assert run.exit_code == 3 and "'Hit'" in run.stderr


def test_folder_without_dispatch_dirs(tmp_path, cli):
    run = cli("analyze", tmp_path)
    assert run.exit_code == 3 and "no ATT dispatch directory" in run.stderr


def test_usage_errors(tmp_path, cli):
    assert cli("analyze").exit_code == 2
    assert cli("analyze", tmp_path, "--mode", "bogus").exit_code == 2
    assert cli("analyze", tmp_path, "--topk", "-1").exit_code == 2


def test_file_over_the_size_cap_is_refused(corpus, cli):
    run = cli("analyze", corpus / "att/gfx950/vec_add", "--max-file-mb", "0.001")
    assert run.exit_code == 3
    assert "code.json" in run.stderr and "limit" in run.stderr and "--max-file-mb" in run.stderr


def test_fourteen_column_code_json_with_list_header(tmp_path, cli):
    """Newer writers append ServiceType, Issued, Stalled, NotIssuedReasons; found by name."""
    header = ["ISA", "_", "LineNumber", "Source", "Codeobj", "Vaddr", "Hit", "Latency", "Stall", "Idle",
              "ServiceType", "Issued", "Stalled", "NotIssuedReasons"]
    d = tmp_path / "ui_output_agent_9_dispatch_4"
    d.mkdir()
    code = [["; k", 0, 0, "k(int)", 1, 0, 0, 0, 0, 0, 0, 0, 0, []],
            ["s_waitcnt vmcnt(0)", 0, 1, "/k.hip:7", 1, 4, 1, 40, 36, 0, 0, 0, 0, []],
            ["s_endpgm", 0, 2, "/k.hip:9", 1, 8, 1, 4, 0, 2, 0, 0, 0, []]]
    (d / "code.json").write_text(json.dumps({"code": code, "header": header, "version": "3.0.0"}))
    wave = {"wave": {"begin": 0, "end": 46, "cu": 1, "simd": 0, "slot": 0, "id": 0,
                     "instructions": [[0, 9, 36, 40, 1], [42, 11, 0, 4, 2]],
                     "timeline": [[3, 36], [2, 4], [1, 2], [2, 4]], "waitcnt": []}}
    (d / "se0_sm0_sl0_wv0.json").write_text(json.dumps(wave))
    (d / "filenames.json").write_text(json.dumps({"version": "3.0.0", "wave_filenames": {
        "0": {"0": {"0": {"0": ["se0_sm0_sl0_wv0.json", 0, 46]}}}}}))
    run = cli("analyze", d, "--format", "json", "--arch", "gfx942")
    assert run.exit_code == 0, run.stderr
    data = run.json()["data"]
    assert data["dispatch"]["kernel"] == "k(int)" and data["dispatch"]["symbol"] == "k"
    assert data["totals"] == {"hit": 2, "latency": 44, "stall": 36, "idle": 2, "issue": 8}
    assert data["instructions"][0]["category"] == "wait-vmcnt"


def test_reader_closing_the_pipe_early_is_not_an_error():
    import subprocess
    import sys

    # --topk 0 JSON of the example is ~140 KB: more than a pipe buffer, so the write really fails
    proc = subprocess.Popen([sys.executable, "-m", "hotspot", "analyze", "--example", "--topk", "0",
                             "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "internal error" not in err


def _two_kernel_dir(tmp_path: Path) -> Path:
    d = tmp_path / "ui_output_agent_9_dispatch_5"
    d.mkdir()
    code = [["; alpha_kernel", 0, 0, "", 1, 0, 0, 0, 0, 0],
            ["s_waitcnt vmcnt(0)", 0, 1, "/a.hip:3", 1, 4, 1, 50, 46, 0],
            ["s_endpgm", 0, 2, "/a.hip:4", 1, 8, 1, 4, 0, 0],
            ["; beta_kernel", 0, 3, "beta_kernel(float*)", 1, 16, 0, 0, 0, 0],
            ["v_mov_b32 v0, 0", 0, 4, "/b.hip:10", 1, 16, 2, 8, 0, 0],
            ["s_endpgm", 0, 5, "/b.hip:11", 1, 20, 2, 8, 0, 0]]
    (d / "code.json").write_text(json.dumps({"code": code, "header": HEADER, "version": "3.0.0"}))
    wave = {"wave": {"begin": 0, "end": 8, "cu": 1, "simd": 0, "slot": 0, "id": 0,
                     "instructions": [[0, 6, 0, 4, 4], [4, 11, 0, 4, 5]],
                     "timeline": [[2, 8]], "waitcnt": []}}
    for n in range(2):
        (d / f"se0_sm0_sl0_wv{n}.json").write_text(json.dumps(wave))
    (d / "filenames.json").write_text(json.dumps({"version": "3.0.0", "wave_filenames": {"0": {"0": {"0": {
        "0": ["se0_sm0_sl0_wv0.json", 0, 8], "1": ["se0_sm0_sl0_wv1.json", 8, 16]}}}}}))
    return d


def test_several_kernels_in_code_json(tmp_path, cli):
    d = _two_kernel_dir(tmp_path)
    # no --kernel: the kernel whose rows executed most (beta: 4 hits vs 2), with a warning
    run = cli("analyze", d, "--format", "json", "--arch", "gfx942")
    data = run.json()["data"]
    assert data["dispatch"]["symbol"] == "beta_kernel" and data["dispatch"]["kernel"] == "beta_kernel(float*)"
    assert data["dispatch"]["kernels_in_code"] == 2 and data["totals"]["hit"] == 4
    assert any("2 kernels in code.json" in w for w in run.json()["warnings"])
    # --kernel selects by regex search on symbol or demangled name
    data = cli("analyze", d, "--format", "json", "--arch", "gfx942", "--kernel", "^alpha").json()["data"]
    assert data["dispatch"]["symbol"] == "alpha_kernel" and data["totals"]["stall"] == 46
    nomatch = cli("analyze", d, "--kernel", "gamma")
    assert nomatch.exit_code == 3 and "alpha_kernel" in nomatch.stderr and "beta_kernel" in nomatch.stderr
    assert cli("analyze", d, "--kernel", "(unclosed").exit_code == 2
