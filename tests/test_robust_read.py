"""Hostile input for the readers (issue 19): files that are not regular files or leave the capture,
unreadable files, values no decoder writes, saved results from elsewhere, conflicting counter rows,
control characters in names. Every case asserts the exit code, no traceback, one JSON envelope
with the right error.code under --format json, and that the input tree is untouched (hashed before
and after).

The FIFO cases and the permission cases run hotspot in a subprocess (a FIFO that regressed would
hang the test process; permissions need a process without CAP_DAC_OVERRIDE when run as root).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from tests.conftest import run_cli

PROJECT_ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = PROJECT_ROOT / "hotspot" / "examples" / "data" / "example_run" / "ui_output_agent_5600_dispatch_1"
WAVE = "se0_sm0_sl0_wv0.json"
HEADER = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
SUBPROCESS_TIMEOUT_S = 60


# --- the input tree, hashed --------------------------------------------------------------------

def tree_state(root: Path) -> dict[str, tuple]:
    """Every entry under `root` by type, without following links or opening FIFOs/devices: regular
    files by content hash and mode, links by target, directories by mode."""
    out: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            p = os.path.join(folder, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                if st.st_mode & 0o444 == 0:
                    out[rel] = ("file", st.st_mode, st.st_size, st.st_mtime_ns)
                else:
                    with open(p, "rb") as fh:
                        out[rel] = ("file", st.st_mode, hashlib.sha256(fh.read()).hexdigest())
            else:
                out[rel] = ("other", st.st_mode)
    return out


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str


def run_hotspot(args: list[str], subprocess_run: bool = False, env: dict[str, str] | None = None,
                drop_dac: bool = False) -> Outcome:
    if not subprocess_run:
        old = {k: os.environ.get(k) for k in (env or {})}
        os.environ.update(env or {})
        try:
            r = run_cli(*args)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return Outcome(r.exit_code, r.stdout, r.stderr)
    argv = [sys.executable, "-m", "hotspot", *args]
    if drop_dac and os.geteuid() == 0:
        # root reads any file: without these capabilities it gets the permission checks of others
        argv = [shutil.which("setpriv") or "setpriv",
                "--bounding-set=-dac_override,-dac_read_search", *argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S,
                          env={**os.environ, **(env or {})}, cwd=PROJECT_ROOT)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def check(args: list[str], root: Path, exit_code: int, code: str | None, *, says: str = "",
          subprocess_run: bool = False, env: dict[str, str] | None = None,
          drop_dac: bool = False) -> Outcome:
    """Run twice (text, then --format json) and assert the outcome of both."""
    before = tree_state(root)
    text = run_hotspot(args, subprocess_run, env, drop_dac)
    js = run_hotspot([*args, "--format", "json"], subprocess_run, env, drop_dac)
    for r in (text, js):
        assert r.exit_code == exit_code, (r.exit_code, r.stderr[-800:])
        assert "Traceback" not in r.stderr, r.stderr
        if exit_code not in (0, 2):  # one line naming the problem (usage errors are click's)
            lines = [ln for ln in r.stderr.splitlines() if ln.startswith("hotspot ")]
            assert len(lines) == 1, r.stderr
    if says:  # on stderr as text; in the envelope's message or warnings under --format json
        assert says in text.stderr, text.stderr
    doc = orjson.loads(js.stdout)  # exactly one JSON document
    if says:
        err = doc.get("error") or {}
        assert says in " ".join([err.get("message", ""), err.get("hint", ""), *doc["warnings"]]), doc
    if exit_code == 0:
        assert doc["ok"] is True
    else:
        assert doc["ok"] is False
        assert doc["error"]["exit_code"] == exit_code
        if code is not None:
            assert doc["error"]["code"] == code, doc["error"]
    assert tree_state(root) == before, "the input tree changed"
    return js


# --- building inputs ---------------------------------------------------------------------------

def capture(tmp_path: Path) -> Path:
    """A copy of the bundled example dispatch dir (a valid capture)."""
    d = tmp_path / "run" / "ui_output_agent_5600_dispatch_1"
    shutil.copytree(EXAMPLE, d)
    return d


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def edit_code(d: Path, change: Callable[[list], None]) -> None:
    edit_json(d / "code.json", lambda doc: change(doc["code"]))


def edit_wave(d: Path, change: Callable[[dict], None]) -> None:
    edit_json(d / WAVE, lambda doc: change(doc["wave"]))


# === 1. files that are not regular files, or leave the capture =================================

def _fifo(name: str) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / name).unlink(missing_ok=True)
        os.mkfifo(d / name)
    return make


def _link(name: str, target: str | Callable[[Path], str]) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        to = target(d) if callable(target) else target
        (d / name).unlink(missing_ok=True)
        os.symlink(to, d / name)
    return make


def _outside(d: Path) -> str:
    out = d.parent.parent / "elsewhere.json"
    shutil.copy(EXAMPLE / WAVE, out)
    return str(out)


def _inside(d: Path) -> str:
    shutil.copy(d / WAVE, d / "moved.json")
    return "moved.json"


def _pair_loop(d: Path) -> str:
    os.symlink(WAVE, d / "other.json")  # other.json -> the wave file, which will link back
    return "other.json"


def _deep_snapshots(depth: int) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / "snapshots.json").write_text('{"a":' * depth + '"x"' + "}" * depth)
    return make


def _wave_dir(d: Path) -> None:
    (d / WAVE).unlink()
    (d / WAVE).mkdir()


def _snapshot_to_device(d: Path) -> None:
    (d / "source_0_gemm_bf16.py").unlink()
    os.symlink("/dev/zero", d / "source_0_gemm_bf16.py")


def _snapshot_loop(d: Path) -> None:
    (d / "source_0_gemm_bf16.py").unlink()
    os.symlink("source_0_gemm_bf16.py", d / "source_0_gemm_bf16.py")


def _source_fifo(d: Path) -> None:
    (d / "source_0_gemm_bf16.py").unlink()
    os.mkfifo(d / "source_0_gemm_bf16.py")


# (id, make, extra args, exit, error.code, stderr says, subprocess)
FILE_CASES = [
    ("wave-fifo", _fifo(WAVE), [], 3, "not-a-file", "is a FIFO", True),
    ("code-fifo", _fifo("code.json"), [], 3, "not-a-file", "is a FIFO", True),
    ("filenames-fifo", _fifo("filenames.json"), [], 3, "not-a-file", "is a FIFO", True),
    ("occupancy-fifo", _fifo("occupancy.json"), [], 0, None, "", True),
    ("snapshots-fifo", _fifo("snapshots.json"), ["--detail"], 0, None, "", True),
    ("source-snapshot-fifo", _source_fifo, ["--detail"], 0, None, "", True),
    ("wave-to-dev-zero", _link(WAVE, "/dev/zero"), [], 3, "bad-link", "leaves the capture folder", False),
    ("wave-to-dev-zero-no-cap", _link(WAVE, "/dev/zero"), ["--max-file-mb", "0"], 3, "bad-link", "/dev/zero", False),
    ("wave-to-dev-null", _link(WAVE, "/dev/null"), [], 3, "bad-link", "leaves the capture folder", False),
    ("wave-self-loop", _link(WAVE, WAVE), [], 3, "bad-link", "symbolic link loop", False),
    ("wave-pair-loop", _link(WAVE, _pair_loop), [], 3, "bad-link", "symbolic link loop", False),
    ("wave-link-outside", _link(WAVE, _outside), [], 3, "bad-link", "leaves the capture folder", False),
    ("wave-link-dangling", _link(WAVE, "gone.json"), [], 3, "bad-link", "missing file", False),
    ("wave-link-inside", _link(WAVE, _inside), [], 0, None, "", False),
    ("wave-is-directory", _wave_dir, [], 3, "not-a-file", "is a directory", False),
    ("code-to-dev-zero", _link("code.json", "/dev/zero"), [], 3, "bad-link", "code.json", False),
    ("code-self-loop", _link("code.json", "code.json"), [], 3, "bad-link", "symbolic link loop", False),
    ("code-dangling", _link("code.json", "nothing.json"), [], 3, "bad-link", "code.json", False),
    ("filenames-loop", _link("filenames.json", "filenames.json"), [], 3, "bad-link", "filenames.json", False),
    ("snapshots-loop", _link("snapshots.json", "snapshots.json"), ["--detail"], 0, None, "snapshots.json", False),
    ("snapshot-file-loop", _snapshot_loop, ["--detail"], 0, None, "loop", False),
    ("snapshot-to-device", _snapshot_to_device, ["--detail"], 0, None, "outside the dispatch dir", False),
    ("snapshots-990-deep", _deep_snapshots(990), ["--detail"], 0, None, "nested deeper", False),
    ("snapshots-2000-deep", _deep_snapshots(2000), ["--detail"], 0, None, "snapshots.json", False),
    ("occupancy-loop", _link("occupancy.json", "occupancy.json"), [], 0, None, "", False),
    ("realtime-to-dev-zero", _link("realtime.json", "/dev/zero"), [], 0, None, "", False),
]


@pytest.mark.parametrize("name,make,extra,exit_code,code,says,sub", FILE_CASES,
                         ids=[c[0] for c in FILE_CASES])
def test_robust_file_types_analyze(tmp_path, name, make, extra, exit_code, code, says, sub):
    d = capture(tmp_path)
    make(d)
    check(["analyze", str(d), *extra], tmp_path / "run", exit_code, code, says=says, subprocess_run=sub)


EXPORT_FILE_CASES = [c for c in FILE_CASES if c[0] in (
    "wave-fifo", "code-fifo", "wave-to-dev-zero", "wave-self-loop", "wave-link-outside", "code-self-loop")]


@pytest.mark.parametrize("command", ["report", "export"])
@pytest.mark.parametrize("name,make,extra,exit_code,code,says,sub", EXPORT_FILE_CASES,
                         ids=[c[0] for c in EXPORT_FILE_CASES])
def test_robust_file_types_report_export(tmp_path, command, name, make, extra, exit_code, code, says, sub):
    d = capture(tmp_path)
    make(d)
    out = tmp_path / "out" / "result.file"
    out.parent.mkdir()
    args = (["report", str(d), "-o", str(out)] if command == "report"
            else ["export", "perfetto", str(d), "-o", str(out)])
    check(args, tmp_path / "run", exit_code, code, says=says, subprocess_run=sub)
    assert not out.exists()


def test_robust_fifo_does_not_hang_with_sampling(tmp_path):
    d = capture(tmp_path)
    _fifo(WAVE)(d)
    check(["analyze", str(d), "--max-waves", "40"], tmp_path / "run", 3, "not-a-file",
          says=WAVE, subprocess_run=True)


# === permissions ===============================================================================

def _needs_permission_checks() -> None:
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permission bits cannot be enforced")


def _chmod(rel: str, mode: int) -> Callable[[Path], Path]:
    def make(d: Path) -> Path:
        target = d / rel if rel != "." else d
        if rel == "..":
            target = d.parent
        target.chmod(mode)
        return target
    return make


PERMISSION_CASES = [
    ("code-unreadable", "code.json", 0o000, "code.json"),
    ("wave-unreadable", WAVE, 0o000, WAVE),
    ("filenames-unreadable", "filenames.json", 0o000, "filenames.json"),
    ("dispatch-dir-unlistable", ".", 0o311, "permission denied listing"),
    ("dispatch-dir-closed", ".", 0o000, "permission denied"),
    ("run-dir-closed", "..", 0o000, "permission denied"),
]


@pytest.mark.parametrize("name,rel,mode,says", PERMISSION_CASES, ids=[c[0] for c in PERMISSION_CASES])
def test_robust_permission_denied(tmp_path, name, rel, mode, says):
    _needs_permission_checks()
    d = capture(tmp_path)
    for p in [tmp_path, *tmp_path.rglob("*")]:  # traversable by the unprivileged process
        if p.is_dir():
            p.chmod(0o755)
    target = _chmod(rel, mode)(d)
    path = d if rel not in ("..",) else d.parent
    try:
        check(["analyze", str(path)], tmp_path / "run", 3, "permission-denied", says=says,
              subprocess_run=True, drop_dac=True)
    finally:
        target.chmod(0o755 if target.is_dir() else 0o644)


# === 2. values no decoder writes ===============================================================

def _set_code(row: int, col: int, value) -> Callable[[list], None]:
    def change(code: list) -> None:
        code[row][col] = value
    return change


CODE_CASES = [
    ("hit-negative", _set_code(1, 6, -1), "'Hit' is -1"),
    ("latency-negative", _set_code(1, 7, -4), "'Latency' is -4"),
    ("stall-negative", _set_code(1, 8, -36), "'Stall' is -36"),
    ("idle-negative", _set_code(1, 9, -1), "'Idle' is -1"),
    ("stall-1e30-float", _set_code(1, 8, 1e30), "'Stall'"),
    ("stall-1e30-int", _set_code(1, 8, 10**30), "'Stall'"),
    ("stall-2^64-1", _set_code(1, 8, 2**64 - 1), "'Stall' is 18446744073709551615"),
    ("stall-2^63", _set_code(1, 8, 2**63), "'Stall'"),
    ("hit-2^44", _set_code(1, 6, 2**44), "'Hit'"),
    ("latency-2^64-1", _set_code(1, 7, 2**64 - 1), "'Latency'"),
    ("idle-1e30", _set_code(1, 9, 1e30), "'Idle'"),
    ("line-negative", _set_code(2, 2, -2), "'LineNumber' is -2"),
    ("line-2^40", _set_code(2, 2, 2**40), "'LineNumber'"),
    ("vaddr-2^64-1", _set_code(1, 5, 2**64 - 1), "'Vaddr'"),
    ("codeobj-negative", _set_code(1, 4, -1), "'Codeobj'"),
    ("duplicate-line-id", _set_code(3, 2, 1), "both declare LineNumber 1"),
]


@pytest.mark.parametrize("name,change,says", CODE_CASES, ids=[c[0] for c in CODE_CASES])
def test_robust_code_json_values(tmp_path, name, change, says):
    d = capture(tmp_path)
    edit_code(d, change)
    check(["analyze", str(d)], tmp_path / "run", 3, "bad-value", says=says)


CODE_SHAPE_CASES = [
    ("hit-bool", _set_code(1, 6, True), "'Hit' is not an integer", "bad-input"),
    ("hit-string", _set_code(1, 6, "5"), "'Hit' is not an integer", "bad-input"),
    ("hit-fraction", _set_code(1, 6, 1.5), "'Hit' is not an integer", "bad-input"),
    ("stall-null", _set_code(1, 8, None), "'Stall' is not an integer", "bad-input"),
    ("isa-number", _set_code(1, 0, 7), "'ISA' is not a string", "bad-input"),
    ("row-short", lambda code: code.__setitem__(1, [1, 2]), "code row 1", "bad-input"),
]


@pytest.mark.parametrize("name,change,says,code", CODE_SHAPE_CASES, ids=[c[0] for c in CODE_SHAPE_CASES])
def test_robust_code_json_shapes(tmp_path, name, change, says, code):
    d = capture(tmp_path)
    edit_code(d, change)
    check(["analyze", str(d)], tmp_path / "run", 3, code, says=says)


RAW_CODE_CASES = [
    ("truncated", lambda text: text[: len(text) // 2], "malformed-json", 3),
    ("empty", lambda text: "", "malformed-json", 3),
    ("list", lambda text: "[]", "bad-input", 3),
    ("nan-literal", lambda text: text.replace("164", "NaN", 1),
     "malformed-json", 3),
    ("code-null", lambda text: json.dumps({"code": None, "header": HEADER, "version": "3.0.0"}),
     "empty-trace", 4),
    ("binary-garbage", lambda text: "\x00\x1b\xff" * 100, "malformed-json", 3),
]


@pytest.mark.parametrize("name,change,code,exit_code", RAW_CODE_CASES, ids=[c[0] for c in RAW_CODE_CASES])
def test_robust_code_json_raw(tmp_path, name, change, code, exit_code):
    d = capture(tmp_path)
    (d / "code.json").write_text(change((d / "code.json").read_text()))
    check(["analyze", str(d)], tmp_path / "run", exit_code, code, says="" if exit_code == 4 else "code.json")


@pytest.mark.parametrize("file", ["code.json", "filenames.json"])
@pytest.mark.parametrize("version,warned", [("9.0.0", True), ("2.0.0", True), ("3.1.0", False)])
def test_robust_unknown_decoder_version_warns_what_was_trusted(tmp_path, file, version, warned):
    d = capture(tmp_path)
    edit_json(d / file, lambda doc: doc.__setitem__("version", version))
    js = check(["analyze", str(d)], tmp_path / "run", 0, None)
    notes = [w for w in orjson.loads(js.stdout)["warnings"] if "format version" in w]
    if warned:
        assert len(notes) == 1 and file in notes[0] and version in notes[0]
        assert "trusting" in notes[0] and ("LineNumber" in notes[0] or "wave_filenames" in notes[0])
    else:
        assert not notes
    # the numbers are still those of a 3.x file (the warning is a caution, not another reading)
    base = capture(tmp_path / "base")
    ref = orjson.loads(run_cli("analyze", str(base), "--format", "json").stdout)
    assert orjson.loads(js.stdout)["data"]["totals"] == ref["data"]["totals"]


def _set_ins(row: int, col: int, value) -> Callable[[dict], None]:
    def change(w: dict) -> None:
        w["instructions"][row][col] = value
    return change


def _set_timeline(row: int, col: int, value) -> Callable[[dict], None]:
    def change(w: dict) -> None:
        w["timeline"][row][col] = value
    return change


WAVE_CASES = [
    ("stall-negative", _set_ins(3, 2, -7), "negative stall (-7)"),
    ("duration-negative", _set_ins(3, 3, -7), "negative duration (-7)"),
    ("time-negative", _set_ins(0, 0, -1), "negative time (-1)"),
    ("category-negative", _set_ins(2, 1, -3), "negative category (-3)"),
    ("line-negative", _set_ins(3, 4, -1), "negative line (-1)"),
    ("line-2^40", _set_ins(3, 4, 2**40), "names line 1099511627776"),
    ("line-2^62", _set_ins(3, 4, 2**62), "names line 4611686018427387904"),
    ("stall-2^40", _set_ins(3, 2, 2**40), "stall of 1099511627776 cycles"),
    ("duration-2^63", _set_ins(3, 3, 2**63 - 1), "duration of 9223372036854775807 cycles"),
    ("state-99", _set_timeline(0, 0, 99), "state 99"),
    ("state-negative", _set_timeline(1, 0, -1), "state -1"),
    ("cycles-negative", _set_timeline(0, 1, -5), "negative cycle count (-5)"),
    ("cycles-2^40", _set_timeline(0, 1, 2**40), "segment of 1099511627776 cycles"),
    ("begin-after-end", lambda w: w.__setitem__("begin", w["end"] + 10), "is after 'wave.end'"),
    ("instruction-string", _set_ins(3, 2, "x"), "'wave.instructions' rows must be"),
    ("timeline-string", _set_timeline(1, 1, "x"), "'wave.timeline' rows must be"),
]


@pytest.mark.parametrize("pure", ["0", "1"], ids=["native", "pure-python"])
@pytest.mark.parametrize("name,change,says", WAVE_CASES, ids=[c[0] for c in WAVE_CASES])
def test_robust_wave_values(tmp_path, pure, name, change, says):
    d = capture(tmp_path)
    edit_wave(d, change)
    code = "bad-value"
    js = check(["analyze", str(d)], tmp_path / "run", 3, code, says=says, env={"HOTSPOT_PURE_PYTHON": pure})
    assert WAVE in orjson.loads(js.stdout)["error"]["message"]


@pytest.mark.parametrize("name,change,says", WAVE_CASES[:6] + WAVE_CASES[9:14],
                         ids=[c[0] for c in WAVE_CASES[:6] + WAVE_CASES[9:14]])
def test_robust_wave_messages_identical_on_both_paths(tmp_path, name, change, says):
    d = capture(tmp_path)
    edit_wave(d, change)
    native = run_hotspot(["analyze", str(d), "--format", "json"], env={"HOTSPOT_PURE_PYTHON": "0"})
    pure = run_hotspot(["analyze", str(d), "--format", "json"], env={"HOTSPOT_PURE_PYTHON": "1"})
    assert native.stdout == pure.stdout and native.stderr == pure.stderr


@pytest.mark.parametrize("pure", ["0", "1"], ids=["native", "pure-python"])
def test_robust_wave_line_absent_from_code_json_warns(tmp_path, pure):
    d = capture(tmp_path)
    edit_wave(d, _set_ins(3, 4, 99999))
    js = check(["analyze", str(d)], tmp_path / "run", 0, None, env={"HOTSPOT_PURE_PYTHON": pure})
    notes = [w for w in orjson.loads(js.stdout)["warnings"] if "absent from" in w]
    assert len(notes) == 1 and "99999" in notes[0] and "1 wave instruction record" in notes[0]


@pytest.mark.parametrize("command", ["analyze", "report", "export"])
@pytest.mark.parametrize("value", ["nan", "inf", "-1", "-inf", "abc"])
def test_robust_max_file_mb_is_a_usage_error(tmp_path, command, value):
    d = capture(tmp_path)
    args = {"analyze": ["analyze", str(d)], "report": ["report", str(d), "-o", str(tmp_path / "r.html")],
            "export": ["export", "perfetto", str(d), "-o", str(tmp_path / "t.json")]}[command]
    check([*args, f"--max-file-mb={value}"], tmp_path / "run", 2, "usage", says="--max-file-mb")


@pytest.mark.parametrize("command", ["analyze", "report", "export"])
def test_robust_file_over_the_cap_is_refused_naming_the_option(tmp_path, command):
    d = capture(tmp_path)
    args = {"analyze": ["analyze", str(d)], "report": ["report", str(d), "-o", str(tmp_path / "r.html")],
            "export": ["export", "perfetto", str(d), "-o", str(tmp_path / "t.json")]}[command]
    check([*args, "--max-file-mb", "0.01"], tmp_path / "run", 3, "file-too-large", says="--max-file-mb")


def test_robust_default_cap_refuses_a_huge_code_json_before_reading(tmp_path):
    from hotspot.att.model import DEFAULT_MAX_FILE_MB

    d = capture(tmp_path)
    with open(d / "code.json", "r+b") as fh:  # sparse: no disk, but the size a reader sees
        fh.truncate(int((DEFAULT_MAX_FILE_MB + 1) * 2**20))
    js = check(["analyze", str(d)], tmp_path / "run", 3, "file-too-large", says="--max-file-mb")
    assert "code.json" in orjson.loads(js.stdout)["error"]["message"]


# === 3. diff and report over bad inputs ========================================================

def _saved(tmp_path: Path) -> Path:
    d = capture(tmp_path / "saved-src")
    r = run_cli("analyze", str(d), "--format", "json", "--topk", "0")
    assert r.exit_code == 0
    out = tmp_path / "run" / "saved.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(r.stdout)
    return out


SAVED_CASES = [
    ("totals-string", lambda doc: doc["data"].__setitem__("totals", "garbage"), "data.totals", "bad-input"),
    ("categories-numbers", lambda doc: doc["data"].__setitem__("stall_by_category", [1, 2]),
     "data.stall_by_category", "bad-input"),
    ("lines-empty-objects", lambda doc: doc["data"].__setitem__("source_lines", [{}]), "data", "bad-input"),
    ("blamed-string", lambda doc: doc["data"].__setitem__("blamed_lines", "x"), "data.blamed_lines", "bad-input"),
    ("dispatch-list", lambda doc: doc["data"].__setitem__("dispatch", [1]), "data.dispatch", "bad-input"),
    ("total-stall-text", lambda doc: doc["data"]["totals"].__setitem__("stall", "many"), "data.totals.stall",
     "bad-input"),
    ("category-stall-text", lambda doc: doc["data"]["stall_by_category"][0].__setitem__("stall", "x"), "data",
     "bad-input"),
    ("data-null", lambda doc: doc.__setitem__("data", None), "data", "bad-input"),
    ("schema-99", lambda doc: doc.__setitem__("schema_version", 99), "schema_version", "unsupported-schema"),
    ("schema-text", lambda doc: doc.__setitem__("schema_version", "2"), "schema_version", "unsupported-schema"),
    ("schema-true", lambda doc: doc.__setitem__("schema_version", True), "schema_version", "unsupported-schema"),
]


@pytest.mark.parametrize("name,change,says,code", SAVED_CASES, ids=[c[0] for c in SAVED_CASES])
def test_robust_diff_saved_json(tmp_path, name, change, says, code):
    good = _saved(tmp_path)
    bad = good.with_name("bad.json")
    doc = json.loads(good.read_text())
    change(doc)
    bad.write_text(json.dumps(doc))
    check(["diff", str(bad), str(good)], tmp_path / "run", 3, code, says=says)


@pytest.mark.parametrize("name,change,says,code",
                         [c for c in SAVED_CASES if c[0] not in ("lines-empty-objects", "category-stall-text")],
                         ids=[c[0] for c in SAVED_CASES if c[0] not in ("lines-empty-objects", "category-stall-text")])
def test_robust_report_saved_json(tmp_path, name, change, says, code):
    good = _saved(tmp_path)
    bad = good.with_name("bad.json")
    doc = json.loads(good.read_text())
    change(doc)
    bad.write_text(json.dumps(doc))
    out = tmp_path / "page.html"
    check(["report", str(bad), "-o", str(out)], tmp_path / "run", 3, code, says=says)
    assert not out.exists()


@pytest.mark.parametrize("layout", ["dispatch-dir", "run-dir"])
def test_robust_diff_truncated_code_json_is_bad_input(tmp_path, layout):
    d = capture(tmp_path)
    good = capture(tmp_path / "good")
    text = (d / "code.json").read_text()
    (d / "code.json").write_text(text[: len(text) // 3])
    side = d if layout == "dispatch-dir" else d.parent
    check(["diff", str(side), str(good)], tmp_path / "run", 3, "malformed-json", says="code.json")


def test_robust_analyze_run_dir_with_only_a_truncated_dispatch(tmp_path):
    d = capture(tmp_path)
    shutil.copytree(d, d.with_name("ui_output_agent_5600_dispatch_2"))
    for x in (d, d.with_name("ui_output_agent_5600_dispatch_2")):
        (x / "code.json").write_text((x / "code.json").read_text()[:500])
    check(["analyze", str(d.parent)], tmp_path / "run", 3, "malformed-json", says="code.json")


# === 4. counter and kernel-trace CSVs ==========================================================

COUNTER_HEADER = ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id","Thread_Id","Grid_Size",'
                  '"Kernel_Id","Kernel_Name","Workgroup_Size","LDS_Block_Size","Scratch_Size","VGPR_Count",'
                  '"Accum_VGPR_Count","SGPR_Count","Counter_Name","Counter_Value","Start_Timestamp",'
                  '"End_Timestamp"')


def counter_row(dispatch: int, counter: str, value: str, kernel: str = "gemm_kernel(float*)",
                start: str = "3200000000010000") -> str:
    return (f'1,{dispatch},"Agent 2",1,4242,4242,65536,7,"{kernel}",256,0,0,64,0,32,"{counter}",'
            f'{value},{start},3200000000011000')


def counter_csv(folder: Path, rows: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run_counter_collection.csv"
    path.write_text("\n".join([COUNTER_HEADER, *rows]) + "\n")
    return path


BASE_COUNTERS = [counter_row(1, "TCC_HIT_sum", "900"), counter_row(1, "TCC_MISS_sum", "100"),
                 counter_row(2, "TCC_HIT_sum", "800"), counter_row(2, "TCC_MISS_sum", "200")]

COUNTER_CASES = [
    ("repeat-other-value", BASE_COUNTERS + [counter_row(1, "TCC_HIT_sum", "901")], 3, "conflict",
     "lines 2 and 6"),
    ("dispatch-on-two-kernels", BASE_COUNTERS + [counter_row(2, "TCC_EA0_RDREQ_sum", "5", kernel="other(int)")],
     3, "conflict", "on two kernels"),
    ("negative-value", BASE_COUNTERS[:3] + [counter_row(2, "TCC_MISS_sum", "-200")], 3, "bad-value", "negative"),
    ("negative-timestamp", BASE_COUNTERS[:2] + [counter_row(2, "TCC_MISS_sum", "200", start="-5")], 3,
     "bad-value", "negative"),
    ("value-nan", BASE_COUNTERS[:3] + [counter_row(2, "TCC_MISS_sum", "nan")], 3, "bad-input", "finite"),
    ("value-text", BASE_COUNTERS[:3] + [counter_row(2, "TCC_MISS_sum", "lots")], 3, "bad-input", "not a number"),
    ("dispatch-text", BASE_COUNTERS[:3] + [counter_row(2, "TCC_MISS_sum", "1").replace("1,2,", "1,x,", 1)], 3,
     "bad-input", "dispatch id"),
]


@pytest.mark.parametrize("name,rows,exit_code,code,says", COUNTER_CASES, ids=[c[0] for c in COUNTER_CASES])
def test_robust_counter_csv(tmp_path, name, rows, exit_code, code, says):
    path = counter_csv(tmp_path / "run", rows)
    check(["pmc", str(path), "--arch", "gfx942"], tmp_path / "run", exit_code, code, says=says)


def test_robust_counter_csv_identical_repeat_is_read_once(tmp_path):
    path = counter_csv(tmp_path / "run", BASE_COUNTERS + [counter_row(1, "TCC_HIT_sum", "900")])
    ref = counter_csv(tmp_path / "ref", BASE_COUNTERS)
    js = check(["pmc", str(path), "--arch", "gfx942"], tmp_path / "run", 0, None)
    doc = orjson.loads(js.stdout)
    assert any("repeat an earlier row" in w and "line 6" in w for w in doc["warnings"])
    expected = orjson.loads(run_cli("pmc", str(ref), "--arch", "gfx942", "--format", "json").stdout)
    assert doc["data"]["kernels"] == expected["data"]["kernels"]  # not summed: 900, not 1800


def test_robust_counter_csv_long_kernel_name(tmp_path):
    name = "ck::kernel_gemm<" + "ck::Tuple<float, half>, " * 8000 + ">"  # ~200k characters
    assert len(name) > 190_000
    path = counter_csv(tmp_path / "run", [r.replace("gemm_kernel(float*)", name) for r in BASE_COUNTERS])
    js = check(["pmc", str(path), "--arch", "gfx942"], tmp_path / "run", 0, None)
    assert orjson.loads(js.stdout)["data"]["kernels"][0]["kernel"] == name


def test_robust_counter_csv_fifo(tmp_path):
    (tmp_path / "run").mkdir()
    os.mkfifo(tmp_path / "run" / "x_counter_collection.csv")
    check(["pmc", str(tmp_path / "run" / "x_counter_collection.csv")], tmp_path / "run", 3, "not-a-file",
          says="FIFO", subprocess_run=True)


WIDE_HEADER = "Dispatch_ID,Kernel_Name,GPU_ID,Start_Timestamp,End_Timestamp,TCC_HIT_sum,TCC_MISS_sum"


def test_robust_wide_counter_csv_repeated_dispatch_names_both_lines(tmp_path):
    (tmp_path / "run").mkdir()
    path = tmp_path / "run" / "pmc_perf.csv"
    path.write_text("\n".join([WIDE_HEADER, "0,k(),0,10,20,5,1", "1,k(),0,30,40,5,1",
                               "0,k(),0,50,60,7,1"]) + "\n")
    check(["pmc", str(path), "--arch", "gfx942"], tmp_path / "run", 3, "conflict", says="lines 2 and 4")


TRACE_HEADER = ('"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name",'
                '"Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size","Scratch_Size","VGPR_Count",'
                '"Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z",'
                '"Grid_Size_X","Grid_Size_Y","Grid_Size_Z"')


def trace_row(dispatch: int, kernel: str = "add_kernel(float*)", start: int = 1000, vgpr: str = "8") -> str:
    return (f'"KERNEL_DISPATCH","Agent 4",1,1,834304,{dispatch},10,"{kernel}",{dispatch},{start},{start + 500},'
            f'0,0,{vgpr},0,16,64,1,1,1024,1024,1')


def trace_csv(folder: Path, rows: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "app_kernel_trace.csv"
    path.write_text("\n".join([TRACE_HEADER, *rows]) + "\n")
    return path


TRACE_CASES = [
    ("repeated-dispatch", [trace_row(1), trace_row(2, start=3000), trace_row(1)], 3, "conflict",
     "lines 2 and 4: Dispatch_Id 1 appears twice"),
    ("repeated-dispatch-other-times", [trace_row(1), trace_row(1, start=9000)], 3, "conflict", "lines 2 and 3"),
    ("dispatch-on-two-kernels", [trace_row(1), trace_row(1, kernel="mul_kernel(float*)")], 3, "conflict",
     "on two kernels"),
    ("negative-vgpr", [trace_row(1), trace_row(2, vgpr="-8")], 3, "bad-value", "negative"),
    ("negative-timestamp", [trace_row(1, start=-600)], 3, "bad-value", "negative"),
    ("end-before-start", [trace_row(1).replace(",1000,1500,", ",1500,1000,")], 3, "bad-input", "before"),
]


@pytest.mark.parametrize("name,rows,exit_code,code,says", TRACE_CASES, ids=[c[0] for c in TRACE_CASES])
def test_robust_kernel_trace_csv(tmp_path, name, rows, exit_code, code, says):
    path = trace_csv(tmp_path / "run", rows)
    check(["kernels", str(path)], tmp_path / "run", exit_code, code, says=says)


def test_robust_kernel_trace_long_kernel_name(tmp_path):
    name = "ck::kernel_gemm<" + "ck::Tuple<float, half>, " * 8000 + ">"  # ~200k characters
    path = trace_csv(tmp_path / "run", [trace_row(1, kernel=name), trace_row(2, kernel=name, start=3000)])
    js = check(["kernels", str(path)], tmp_path / "run", 0, None)
    assert [k["name"] for k in orjson.loads(js.stdout)["data"]["kernels"]] == [name]


def test_robust_kernel_trace_fifo(tmp_path):
    (tmp_path / "run").mkdir()
    os.mkfifo(tmp_path / "run" / "app_kernel_trace.csv")
    r = run_hotspot(["kernels", str(tmp_path / "run" / "app_kernel_trace.csv"), "--format", "json"],
                    subprocess_run=True)
    assert r.exit_code in (3,) and "Traceback" not in r.stderr


# === 5. control characters in names ============================================================

ESC_KERNEL = "gemm\x1b[31mRED|pipe\nnewline"
ESC_SOURCE = "/work/ex/\x1b]0;title\x07k.py:31"


def _esc_capture(tmp_path: Path) -> Path:
    d = capture(tmp_path)

    def change(code: list) -> None:
        code[0][0] = f"; {ESC_KERNEL}"
        code[1][3] = ESC_SOURCE
    edit_code(d, change)
    return d


@pytest.mark.parametrize("fmt", ["text", "markdown"])
@pytest.mark.parametrize("extra", [[], ["--detail"], ["--plan"]], ids=["plain", "detail", "plan"])
def test_robust_text_escapes_control_characters(tmp_path, fmt, extra):
    d = _esc_capture(tmp_path)
    before = tree_state(tmp_path / "run")
    r = run_cli("analyze", str(d), "--format", fmt, *extra)
    assert r.exit_code == 0 and "Traceback" not in r.stderr
    for stream in (r.stdout, r.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
    assert "gemm\\x1b[31mRED" in r.stdout
    if fmt == "markdown":
        assert "RED\\|pipe\\x0anewline" in r.stdout  # the cell neither ends nor breaks the row
    assert tree_state(tmp_path / "run") == before


def test_robust_json_keeps_exact_strings(tmp_path):
    d = _esc_capture(tmp_path)
    r = run_cli("analyze", str(d), "--format", "json", "--detail")
    doc = orjson.loads(r.stdout)
    assert doc["data"]["dispatch"]["kernel"] == ESC_KERNEL


@pytest.mark.parametrize("command", ["analyze", "plan"])
def test_robust_error_lines_escape_control_characters(tmp_path, command):
    d = _esc_capture(tmp_path)
    r = run_cli(command, str(d), "--kernel", "no-such-kernel")
    assert r.exit_code == 3 and "Traceback" not in r.stderr
    assert "\x1b" not in r.stderr and "gemm\\x1b[31mRED" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1  # a newline in a name does not split the line


def test_robust_kernels_text_escapes_names(tmp_path):
    path = trace_csv(tmp_path / "run", [trace_row(1, kernel="k\x1b[2Jclear|x"), trace_row(2, start=3000)])
    for fmt in ("text", "markdown"):
        r = run_cli("kernels", str(path), "--format", fmt)
        assert r.exit_code == 0 and "\x1b" not in r.stdout and "k\\x1b[2Jclear" in r.stdout
    doc = orjson.loads(run_cli("kernels", str(path), "--format", "json").stdout)
    assert "k\x1b[2Jclear|x" in [k["name"] for k in doc["data"]["kernels"]]


def test_robust_diff_text_escapes_names(tmp_path):
    a = _esc_capture(tmp_path / "a")
    b = _esc_capture(tmp_path / "b")
    r = run_cli("diff", str(a), str(b))
    assert r.exit_code == 0 and "\x1b" not in r.stdout and "\x1b" not in r.stderr


# === fuzz: code.json, wave files, counter CSVs =================================================

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

json_scalars = st.one_of(
    st.none(), st.booleans(), st.text(max_size=8),
    st.integers(min_value=-(2**64), max_value=2**64 - 1),
    st.sampled_from([0, 1, -1, 2**31, 2**40, 2**63 - 1, 2**63, 2**64 - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False, width=64))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=4)


def _fuzz_run(root: Path, args: list[str]) -> None:
    before = tree_state(root)
    for fmt in ("text", "json"):
        r = run_cli(*args, "--format", fmt)
        assert r.exit_code in (0, 3, 4), (r.exit_code, r.stderr[-600:])
        assert "Traceback" not in r.stderr
        if fmt == "json":
            doc = orjson.loads(r.stdout)
            assert doc["ok"] is (r.exit_code == 0)
    assert tree_state(root) == before


def _fresh_capture(folder: Path) -> Path:
    d = folder / "run" / "ui_output_agent_5600_dispatch_1"
    shutil.copytree(EXAMPLE, d)
    return d


@pytest.mark.slow
@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 135), st.integers(0, 9), json_values), min_size=1, max_size=4),
       cut=st.one_of(st.none(), st.integers(0, 20000)))
def test_robust_fuzz_code_json(edits, cut):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        d = _fresh_capture(Path(tmp))

        def change(code: list) -> None:
            for row, col, value in edits:
                code[row % len(code)][col] = value
        edit_code(d, change)
        if cut is not None:
            text = (d / "code.json").read_bytes()
            (d / "code.json").write_bytes(text[:cut])
        _fuzz_run(Path(tmp) / "run", ["analyze", str(d)])


@pytest.mark.slow
@FUZZ
@given(edits=st.lists(st.tuples(st.sampled_from(["instructions", "timeline", "begin", "end", "cu", "waitcnt"]),
                                st.integers(0, 50), st.integers(0, 4), json_values), min_size=1, max_size=4),
       pure=st.booleans())
def test_robust_fuzz_wave_file(edits, pure):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        d = _fresh_capture(Path(tmp))

        def change(w: dict) -> None:
            for key, row, col, value in edits:
                if key in ("begin", "end", "cu", "waitcnt") or not w.get(key):
                    w[key] = value
                else:
                    rows = w[key]
                    rec = rows[row % len(rows)]
                    if isinstance(rec, list) and rec:
                        rec[col % len(rec)] = value
                    else:
                        rows[row % len(rows)] = value
        edit_wave(d, change)
        old = os.environ.get("HOTSPOT_PURE_PYTHON")
        os.environ["HOTSPOT_PURE_PYTHON"] = "1" if pure else "0"
        try:
            _fuzz_run(Path(tmp) / "run", ["analyze", str(d)])
        finally:
            if old is None:
                os.environ.pop("HOTSPOT_PURE_PYTHON", None)
            else:
                os.environ["HOTSPOT_PURE_PYTHON"] = old


csv_cells = st.one_of(st.sampled_from(["0", "1", "900", "-5", "1e3", "nan", "inf", "", "x", "2.5",
                                       "18446744073709551616"]),
                      st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6))


@FUZZ
@given(rows=st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["TCC_HIT_sum", "TCC_MISS_sum", "SQ_WAVES"]),
                               csv_cells, st.sampled_from(["k()", "m()", "k\x1b[1m()", "a|b"]), csv_cells),
                     min_size=1, max_size=8))
def test_robust_fuzz_counter_csv(rows):
    import csv
    import io
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        folder.mkdir()
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(next(csv.reader([COUNTER_HEADER])))
        for dispatch, counter, value, kernel, start in rows:
            w.writerow([1, dispatch, "Agent 2", 1, 4242, 4242, 65536, 7, kernel, 256, 0, 0, 64, 0, 32, counter,
                        value, start, "3200000000011000"])
        path = folder / "x_counter_collection.csv"
        path.write_text(buf.getvalue())
        before = tree_state(folder)
        for fmt in ("text", "json"):
            r = run_cli("pmc", str(path), "--arch", "gfx942", "--format", fmt)
            assert r.exit_code in (0, 3, 4, 9), (r.exit_code, r.stderr[-600:])  # 9: every counter 0
            assert "Traceback" not in r.stderr
            if fmt == "json":
                assert orjson.loads(r.stdout)["ok"] is (r.exit_code == 0)
        assert tree_state(folder) == before
