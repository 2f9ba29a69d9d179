"""Every command exits alike in every format it prints, with the code docs/exit-codes.md gives
(issue 35): the exit code is decided once, with the command's Result or its error, never by a view.

The matrix: each failure case below that needs no GPU (missing input, bad input, empty trace, usage
error, a failed sweep entry under the fake rocprofv3, nothing to do, not comparable, unusable
counters, a missing tool, a sweep status naming a problem, `--slurm --wait`) x every `--format` the
command's view offers (hotspot/render/registry.py). Commands run in-process (tests/conftest.py
run_cli, the same `main` the console script calls); only the signal test starts a process, since
what it checks (exit code by signal, processes left) belongs to a real process.

Text and markdown go through the escaping copy of the Result (hotspot/render/escape.py) when a
string holds a control character: the sweep cases carry a `slurm.prelude` with a newline, which once
made a failed sweep exit 0 in text and 6 in JSON.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from hotspot.errors import (
    EXIT_BAD_INPUT,
    EXIT_COMMAND_FAILED,
    EXIT_EMPTY_TRACE,
    EXIT_NOT_COMPARABLE,
    EXIT_NOTHING_TO_DO,
    EXIT_TOOL_MISSING,
    EXIT_UNUSABLE_COUNTERS,
    EXIT_USAGE,
)
from hotspot.commandspec import formats_of as output_formats
from tests.conftest import CliRun, run_cli
from tests.fake_rocprofv3.helpers import app, clean_env, fake  # noqa: F401  (fixture)
from tests.sweep_support import entry, no_inherited_devices, write_recipes  # noqa: F401  (autouse fixture)

ROOT = Path(__file__).resolve().parents[1]
PMC = Path(__file__).resolve().parent / "fixtures" / "pmc"
PRELUDE = {"prelude": "module load rocm\nexport X=1"}  # a newline: the text views escape it


def formats(view: str) -> tuple[str, ...]:
    """The view's `--format` choices, from the spec of the command that declares it (every adapter
    imported through the command index first, as the CLI does when it mounts them)."""
    import importlib

    from hotspot.clihelp.index import COMMANDS

    for module, *_ in COMMANDS.values():
        importlib.import_module(module)
    return output_formats(view)


def run_all(view: str, argv: list[str], *, before: Callable[[str], list[str]] | None = None
            ) -> dict[str, CliRun]:
    """`hotspot ARGV --format F` for every format of `view`; `before(fmt)` may give per-format argv."""
    runs = {}
    for fmt in formats(view):
        args = before(fmt) if before is not None else argv
        cut = args.index("--") if "--" in args else len(args)  # after `--` is the application's
        runs[fmt] = run_cli(*args[:cut], "--format", fmt, *args[cut:])
    return runs


def assert_exits(runs: dict[str, CliRun], code: int, *, table_then_error: bool = False) -> None:
    """Every format exits `code`; JSON says so in its envelope; no traceback; a result (a code
    that is not an error: 0, 6 of a sweep, 7, 8, 9) is printed in every format, an error only
    on stderr (hotspot's line with its next step, or click's usage message); `table_then_error`:
    the text views print the checks before the error line (doctor)."""
    got = {fmt: r.exit_code for fmt, r in runs.items()}
    assert got == {fmt: code for fmt in runs}, {fmt: r.stderr[-300:] for fmt, r in runs.items()}
    for fmt, r in runs.items():
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr, (fmt, r.stderr)
        if fmt == "json":
            doc = r.json()
            said = doc["error"]["exit_code"] if "error" in doc else doc.get("exit_code", 0)
            assert (doc["ok"], said) == (code == 0, code), doc.get("error")
        elif "error" not in runs["json"].json():  # a result: shown in this format too
            assert r.stdout.strip(), (fmt, r.stderr)
        else:
            assert (r.stdout != "") is table_then_error and r.stderr.strip(), (fmt, r.stdout[:200], r.stderr)


# ------------------------------------------------------------------ inputs, built once
@dataclass
class Inputs:
    good: Path  # a dispatch dir of 4 traced waves
    other: Path  # a saved analysis of another kernel
    empty: Path  # code.json "code": null
    bad: Path  # malformed code.json
    missing: Path
    pmc_zero: Path  # every counter value 0
    pmc_none: Path  # no counter pmc reads
    odd_csv: Path  # an unknown CSV layout


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Inputs:
    import json

    from tests.test_analyze_errors import _write
    from tests.test_diff import _dispatch

    root = tmp_path_factory.mktemp("matrix")
    good = _dispatch(root / "good" / "ui_output_agent_1_dispatch_1", 400)
    saved = run_cli("analyze", good, "--format", "json", "--topk", "0")
    assert saved.exit_code == 0, saved.stderr
    doc = saved.json()
    doc["data"]["dispatch"]["kernel"] = "another_kernel"
    other = root / "other.json"
    other.write_text(json.dumps(doc))
    empty = _write(root / "empty" / "ui_output_agent_1_dispatch_2", None)
    bad = root / "bad" / "ui_output_agent_1_dispatch_3"
    shutil.copytree(good, bad)
    (bad / "code.json").write_text('{"code": [[1, 2')  # truncated, beside valid wave files
    l2 = (PMC / "l2.csv").read_text()
    zero = root / "zero_counter_collection.csv"
    zero.write_text(re.sub(r'"(TCC_(?:HIT|MISS)_sum)",[0-9.]+,', r'"\1",0,', l2))
    assert zero.read_text() != l2
    none = root / "none_counter_collection.csv"
    none.write_text(l2.replace('"TCC_HIT_sum"', '"SQ_WAVES"').replace('"TCC_MISS_sum"', '"SQ_BUSY_CYCLES"'))
    odd = root / "odd.csv"
    odd.write_text("a,b,c\n1,2,3\n")
    return Inputs(good, other, empty, bad, root / "nope", zero, none, odd)


# ------------------------------------------------------------------ the read-only commands
# (view, argv with {good} {other} {empty} {bad} {missing} {pmc_zero} {pmc_none} {odd_csv} {out}, code)
READ_CASES = [
    # missing input: exit 3
    ("analyze", ["analyze", "{missing}"], EXIT_BAD_INPUT),
    ("plan", ["plan", "{missing}"], EXIT_BAD_INPUT),
    ("report", ["report", "{missing}", "-o", "{out}"], EXIT_BAD_INPUT),
    ("export", ["export", "perfetto", "{missing}", "-o", "{out}"], EXIT_BAD_INPUT),
    ("diff", ["diff", "{missing}", "{good}"], EXIT_BAD_INPUT),
    ("pmc", ["pmc", "{missing}"], EXIT_BAD_INPUT),
    ("kernels", ["kernels", "{missing}"], EXIT_BAD_INPUT),
    ("sweep status", ["sweep", "status", "{missing}"], EXIT_BAD_INPUT),
    ("sweep report", ["sweep", "report", "{missing}"], EXIT_BAD_INPUT),
    ("sweep cancel", ["sweep", "cancel", "{missing}"], EXIT_BAD_INPUT),
    ("sweep", ["sweep", "{missing}"], EXIT_BAD_INPUT),
    # bad input: exit 3
    ("analyze", ["analyze", "{bad}"], EXIT_BAD_INPUT),
    ("plan", ["plan", "{bad}"], EXIT_BAD_INPUT),
    ("report", ["report", "{bad}", "-o", "{out}"], EXIT_BAD_INPUT),
    ("export", ["export", "perfetto", "{bad}", "-o", "{out}"], EXIT_BAD_INPUT),
    ("diff", ["diff", "{good}", "{bad}"], EXIT_BAD_INPUT),
    ("pmc", ["pmc", "{odd_csv}"], EXIT_BAD_INPUT),
    ("kernels", ["kernels", "{odd_csv}"], EXIT_BAD_INPUT),
    # empty trace: exit 4
    ("analyze", ["analyze", "{empty}"], EXIT_EMPTY_TRACE),
    ("plan", ["plan", "{empty}"], EXIT_EMPTY_TRACE),
    ("report", ["report", "{empty}", "-o", "{out}"], EXIT_EMPTY_TRACE),
    ("export", ["export", "perfetto", "{empty}", "-o", "{out}"], EXIT_EMPTY_TRACE),
    ("diff", ["diff", "{good}", "{empty}"], EXIT_EMPTY_TRACE),
    ("brief", ["plan", "{empty}", "--brief"], EXIT_EMPTY_TRACE),
    ("plan detail", ["plan", "{empty}", "--detail"], EXIT_EMPTY_TRACE),
    # not comparable: exit 8, the rows still printed
    ("diff", ["diff", "{good}", "{other}"], EXIT_NOT_COMPARABLE),
    # unusable counters: exit 9, the result still printed
    ("pmc", ["pmc", "{pmc_zero}", "--arch", "gfx942"], EXIT_UNUSABLE_COUNTERS),
    ("pmc", ["pmc", "{pmc_none}"], EXIT_UNUSABLE_COUNTERS),
    # success, for contrast: the same code in every format
    ("analyze", ["analyze", "{good}"], 0),
    ("diff", ["diff", "{good}", "{good}"], 0),
    ("pmc", ["pmc", str(PMC / "l2.csv"), "--arch", "gfx942"], 0),
    ("occupancy", ["occupancy", "--arch", "gfx942", "--vgpr", "128", "--lds", "65536", "--wg", "256"], 0),
    # occupancy's bad value (not a usage error of click's): exit 2 in csv as in every format
    ("occupancy", ["occupancy", "--arch", "gfx942", "--vgpr", "9999"], EXIT_USAGE),
]

# usage errors: exit 2 in every command and format (an unknown option, or a value that does not parse)
USAGE_CASES = [
    ("analyze", ["analyze", "{good}", "--topk", "abc"]),
    ("plan", ["plan", "{good}", "--no-such-option"]),
    ("report", ["report", "{good}", "--no-such-option"]),
    ("export", ["export", "perfetto", "{good}", "--no-such-option"]),
    ("diff", ["diff", "{good}"]),  # AFTER missing
    ("occupancy", ["occupancy", "--vgprs", "many"]),
    ("pmc", ["pmc", str(PMC / "l2.csv"), "--peak-gbps", "-5"]),
    ("kernels", ["kernels", "{good}", "--no-such-option"]),
    ("collect", ["collect", "--no-such-option"]),
    ("doctor", ["doctor", "--no-such-option"]),
    ("skill install", ["skill", "install", "--no-such-option"]),
    ("cache info", ["cache", "info", "--no-such-option"]),
    ("cache clear", ["cache", "clear", "--no-such-option"]),
    ("skill path", ["skill", "path", "--no-such-option"]),
    ("sweep", ["sweep", "a.yaml", "b.yaml"]),
    ("sweep init", ["sweep", "--init", "a.yaml", "b.yaml"]),
    ("sweep status", ["sweep", "status", "{good}", "--no-such-option"]),
]


def _argv(template: list[str], inp: Inputs, out: Path) -> list[str]:
    names = {k: str(v) for k, v in vars(inp).items()} | {"out": str(out)}
    return [a.format(**names) for a in template]


@pytest.mark.parametrize("view,template,code", READ_CASES,
                         ids=[f"{c[0]}-{i}-exit{c[2]}" for i, c in enumerate(READ_CASES)])
def test_read_commands_exit_alike_in_every_format(inputs, tmp_path, view, template, code):
    def argv(fmt: str) -> list[str]:
        return _argv(template, inputs, tmp_path / f"out-{fmt}")

    assert_exits(run_all(view, [], before=argv), code)


@pytest.mark.parametrize("view,template", USAGE_CASES, ids=[c[0] for c in USAGE_CASES])
def test_usage_errors_exit_2_in_every_format(inputs, tmp_path, view, template):
    assert_exits(run_all(view, _argv(template, inputs, tmp_path / "out")), EXIT_USAGE)


# ------------------------------------------------------------------ tools and runs (fake rocprofv3)
def test_missing_tool_exits_5_in_every_format(monkeypatch, tmp_path):
    clean_env(monkeypatch, tmp_path, with_fake=False)
    assert_exits(run_all("doctor", ["doctor"]), EXIT_TOOL_MISSING, table_then_error=True)
    assert_exits(run_all("collect", ["collect", "--", *app()]), EXIT_TOOL_MISSING)


def test_failing_application_exits_6_in_every_format(fake):
    assert_exits(run_all("collect", ["collect", "--", *app("import sys", "sys.exit(1)")]),
                 EXIT_COMMAND_FAILED)


def test_sweep_failed_entry_then_nothing_to_do_exit_alike(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("good", 0.0, rec), entry("bad", 0.0, rec, code=3)],
                            slurm=PRELUDE)
    # failed entry: 6 in every format (each format its own sweep, so each one runs the entry)
    failed = run_all("sweep", [], before=lambda fmt: ["sweep", str(recipes), "--gpus", "0", "-o",
                                                      str(fake.root / f"sw-{fmt}")])
    assert_exits(failed, EXIT_COMMAND_FAILED)
    assert "\\x0a" in failed["text"].stdout or "module load" not in failed["text"].stdout  # escaped if shown
    # its status and report, in every format (csv too): the same code
    assert_exits(run_all("sweep status", ["sweep", "status", str(fake.root / "sw-text")]), 0)
    assert_exits(run_all("sweep report", ["sweep", "report", str(fake.root / "sw-text")]), 0)
    # a rerun with the failure left unretried: still the sweep's outcome, 6 (failures win over 7)
    assert_exits(run_all("sweep", ["sweep", str(recipes), "--gpus", "0", "-o", str(fake.root / "sw-text")]),
                 EXIT_COMMAND_FAILED)
    # every entry done, nothing to do: 7, locally and with --slurm (nothing submitted, no sbatch needed)
    done = write_recipes(fake.root / "done.yaml", [entry("good", 0.0, rec)], slurm=PRELUDE)
    sw = fake.root / "sw-done"
    assert run_cli("sweep", str(done), "--gpus", "0", "-o", str(sw)).exit_code == 0
    local = run_all("sweep", ["sweep", str(done), "--gpus", "0", "-o", str(sw)])
    assert_exits(local, EXIT_NOTHING_TO_DO)
    assert "nothing to do" in local["text"].stderr and local["json"].json()["data"]["to_do"] == 0
    slurm = run_all("sweep", ["sweep", str(done), "--slurm", "-o", str(sw)])
    assert_exits(slurm, EXIT_NOTHING_TO_DO)
    assert slurm["text"].stdout.startswith("nothing to do: every entry of")
    assert not (sw / "sweep.sbatch").exists()
    # --retry failed: work again, so not 7 (the entry fails again: 6)
    assert run_cli("sweep", str(recipes), "--gpus", "0", "-o", str(fake.root / "sw-json"),
                   "--retry", "failed").exit_code == EXIT_COMMAND_FAILED


def _no_slurm(monkeypatch) -> None:
    from tests.test_sweep_status import no_slurm_path

    no_slurm_path(monkeypatch, Path("."))


def test_sweep_status_naming_a_problem_exits_6_in_every_format(fake, tmp_path, monkeypatch):
    """Every task died at start (their logs say exit 5): 6 in text as in JSON, prelude and all."""
    from tests.test_sweep_status import fake_submitted

    recipes = write_recipes(fake.root / "r.yaml", [entry("a", 0.0, tmp_path / "rec.jsonl")], slurm=PRELUDE)
    sw = fake.root / "sw"
    assert run_cli("sweep", str(recipes), "--slurm", "--dry-run", "-o", str(sw)).exit_code == 0
    fake_submitted(sw, "41", 1)
    (sw / "slurm" / "41_0.out").write_text(
        "=== hotspot sweep task begin: task 0 of job 41 restart 0 on node0 at 2026-11-25T10:00:00Z\n"
        "=== hotspot sweep task end: exit 5 at 2026-11-25T10:00:01Z\n")
    _no_slurm(monkeypatch)
    runs = run_all("sweep status", ["sweep", "status", str(sw)])
    assert_exits(runs, EXIT_COMMAND_FAILED)
    assert "problem: task 41_0 died (exit 5)" in runs["text"].stdout


def test_slurm_wait_answers_as_sweep_with_submission_and_status_in_every_format(fake, tmp_path, monkeypatch):
    """`sweep --slurm --wait`, sbatch standing in: the "submission" runs the array's one task here
    (the worker a Slurm task runs) and writes its task log; the status then comes from that log.
    Regression: text ended in "internal error: 'StatusData' object has no attribute 'submission'"
    (exit 1), and JSON said "sweep status"."""
    from hotspot.sweep import api, slurm, views

    jobs = iter(range(70, 80))

    def submit(script: Path) -> str:
        job = str(next(jobs))
        worker = api.run_worker(script.parent, "0")
        log = script.parent / slurm.LOG_DIR / f"{job}_0.out"
        log.parent.mkdir(exist_ok=True)
        log.write_text(f"{slurm.TASK_BEGIN}: task 0 of job {job} restart 0 on node0 at 2026-11-25T10:00:00Z\n"
                       f"{slurm.TASK_END}: exit {worker.exit_code} at 2026-11-25T10:00:01Z\n")
        return job

    monkeypatch.setattr(slurm, "submit", submit)
    monkeypatch.setattr(views, "FOLLOW_POLL_S", 0.05)
    monkeypatch.setenv("COLUMNS", "250")  # the long paths of the status on one line each
    _no_slurm(monkeypatch)
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("good", 0.0, rec), entry("bad", 0.0, rec, code=3)],
                            slurm=PRELUDE)
    runs = run_all("sweep", [], before=lambda fmt: ["sweep", str(recipes), "--slurm", "--wait", "--gpus", "0",
                                                    "-o", str(fake.root / f"sw-{fmt}")])
    assert_exits(runs, EXIT_COMMAND_FAILED)  # the sweep's outcome (an entry failed), not the submission's
    doc = runs["json"].json()
    assert doc["command"] == "sweep" and doc["data"]["counts"] == {**doc["data"]["counts"], "done": 1, "failed": 1}
    job = doc["data"]["submitted"]["slurm"]["job_id"]
    assert doc["data"]["slurm"]["job_id"] == job and doc["data"]["submitted"]["to_do"] == 2
    assert [(t["state"], t["exit_code"]) for t in doc["data"]["slurm"]["tasks"]] == [("ENDED", 6)]
    text = runs["text"].stdout
    assert re.match(r"submitted Slurm job 7\d \(1 array task\(s\),", text), text[:200]
    assert text.index("sweep.sbatch") < text.index("sw-text: 1 done, 1 failed of 2") < text.index("\nSlurm job ")
    assert runs["markdown"].stdout.startswith("## hotspot sweep ") and "1 done, 1 failed of 2" in runs["markdown"].stdout


def test_followed_result_renders_without_slurm_or_a_run():
    """The views given the --wait result (unit level): the submission line, then the status."""
    from hotspot.render.sweep import render_sweep, render_sweep_markdown
    from hotspot.sweep_records import Followed, RecipesRef, Submitted, SubmittedWork
    from hotspot.sweep.outcome import SweepResult

    data = Followed("/s", "/s/sweep.json", RecipesRef("r.yaml", "x", "a\nb"), {"done": 2, "pending": 0}, 2, [],
                    submitted=SubmittedWork(Submitted("9", "/s/sweep.sbatch", 1, False, 4, None), True, None,
                                            [], [], 2))
    result = SweepResult("sweep", data, [], 0)
    text = render_sweep(result)
    assert text.splitlines()[:2] == ["submitted Slurm job 9 (1 array task(s), 4 CPUs each); script /s/sweep.sbatch",
                                     "sweep /s: 2 done of 2"]
    assert "submitted Slurm job 9" in render_sweep_markdown(result)


def test_escaping_keeps_the_exit_code():
    """The text views' copy of a Result with a string to escape keeps its exit code (it once was a
    class default the copy did not carry)."""
    from hotspot.render.escape import escaped
    from hotspot.result import Result
    from hotspot.sweep.outcome import SweepResult

    for cls in (Result, SweepResult):
        r = cls("sweep", {"prelude": "a\nb"}, [], 6)
        copy = escaped(r)
        assert copy is not r and copy.data == {"prelude": "a\\x0ab"} and copy.exit_code == 6


# ------------------------------------------------------------------ documented
def _table_codes(text: str) -> dict[int, str]:
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\|\s*([0-9, ]+?)\s*\|\s*([^|]+)\|", line)
        if m:
            for c in m.group(1).split(","):
                rows[int(c)] = m.group(2).strip()
    return rows


def test_every_code_of_the_matrix_is_documented_with_its_meaning():
    docs = _table_codes((ROOT / "docs" / "exit-codes.md").read_text())
    readme = _table_codes((ROOT / "README.md").read_text().split("## Exit codes", 1)[1])
    used = {c for _, _, c in READ_CASES} | {EXIT_USAGE, EXIT_TOOL_MISSING, EXIT_COMMAND_FAILED, 130, 143, 129}
    assert used <= set(docs) and used <= set(readme)
    for code, words in ((EXIT_NOTHING_TO_DO, "nothing to do"), (EXIT_NOT_COMPARABLE, "not comparable"),
                        (EXIT_UNUSABLE_COUNTERS, "unusable counters")):
        assert docs[code] == words and readme[code].startswith(words)
    assert len({EXIT_NOTHING_TO_DO, EXIT_NOT_COMPARABLE, EXIT_UNUSABLE_COUNTERS} | {0, 1, 2, 3, 4, 5, 6}) == 10


# ------------------------------------------------------------------ signals: a real process
# The watcher: a process of its own that becomes the "child subreaper" (Linux prctl) of what it
# starts, so a process hotspot leaves behind is re-parented to it instead of to init. It starts
# hotspot in a new session, waits until the wave pass runs in worker processes, sends the signal,
# and once hotspot has exited reports (JSON on stdout): hotspot's exit code and stderr, the
# session's processes still alive at that moment (from /proc), and every process re-parented to it
# that then exited on its own (exit status, not a signal). A helper that waits for EOF on hotspot's
# pipe (the fork server, the resource tracker) can only exit after hotspot and lands in that list
# every time, not only when the /proc look is quick enough; workers hotspot killed exit by SIGKILL.
WATCHER = r"""
import ctypes, json, os, signal, subprocess, sys, time
from pathlib import Path

sig, argv, env = int(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER

def session(sid):
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                out.append([int(d.name), fields[0], cmd[:120]])
    return out

def finish(report):  # never leave anything behind ourselves: the session's group, killed
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass
    print(json.dumps(report))
    sys.exit(0)

p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
deadline = time.monotonic() + 120
# the pool is up once the fork server has forked a worker (the server and its workers share a cmdline)
while len([x for x in session(p.pid) if "forkserver" in x[2]]) < 2:
    if p.poll() is not None or time.monotonic() > deadline:
        finish({"error": "no worker process", "stderr": p.stderr.read().decode()[-800:]})
    time.sleep(0.02)
p.send_signal(sig)
try:
    out, err = p.communicate(timeout=60)  # a helper holding hotspot's stderr open also ends here
except subprocess.TimeoutExpired:
    finish({"error": "hotspot or a process holding its output did not end in 60 s", "left": session(p.pid)})
left = session(p.pid)
outlived = []
end = time.monotonic() + 1.0
while time.monotonic() < end:  # what was re-parented here and exits of its own
    try:
        pid, status = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        time.sleep(0.01)
    elif os.WIFEXITED(status):
        outlived.append([pid, os.WEXITSTATUS(status)])
finish({"code": p.returncode, "stdout": out.decode()[-400:], "stderr": err.decode()[-800:], "left": left,
     "outlived": outlived})
"""


@pytest.fixture(scope="module")
def large_capture(tmp_path_factory) -> Path:
    """Enough wave JSON and files for `--jobs 2` to use worker processes (hotspot/att/engine/worker_count.py
    EXPLICIT_POOL_MIN_BYTES, wavepass.py CHUNK_WAVES), and no more."""
    from hotspot.att.engine.worker_count import EXPLICIT_POOL_MIN_BYTES
    from hotspot.att.engine.wavepass import CHUNK_WAVES

    out = tmp_path_factory.mktemp("large")
    target_mb = EXPLICIT_POOL_MIN_BYTES * 1.1 / 1e6
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_dispatch.py"), "--out", str(out),
                           "--target-mb", f"{target_mb:.1f}", "--slots", "8", "--seed", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (ddir,) = [p for p in out.iterdir() if p.is_dir()]
    waves = list(ddir.glob("se*_wv*.json"))
    assert len(waves) > 2 * CHUNK_WAVES and sum(w.stat().st_size for w in waves) >= EXPLICIT_POOL_MIN_BYTES
    return ddir


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux's")
@pytest.mark.xdist_group("large-capture")  # one worker makes the module's capture, not both
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_during_a_pooled_fresh_cached_analysis_leaves_no_process(large_capture, tmp_path, sig):
    """SIGINT/SIGTERM/SIGHUP while the wave pass runs in worker processes, the cache on and empty:
    exit 128 + the signal, and no process of the session outlives hotspot (the fork server and the
    resource tracker did: they left only on EOF, after hotspot's os._exit). hotspot runs through
    tests/pool_gate.py, held in the wave pass once the pool has its chunks: the signal raced the end
    of the analysis (a fraction of a second for this capture) and could find hotspot done, exit 0."""
    import json

    from tests import pool_gate

    env = {**os.environ, "HOTSPOT_CACHE": "on", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("HOTSPOT_DEBUG", None)
    driver = tmp_path / "driver.py"
    driver.write_text(pool_gate.DRIVER)
    argv = [sys.executable, str(driver), "analyze", str(large_capture), "--jobs", "2", "--format", "json"]
    proc = subprocess.run([sys.executable, "-c", WATCHER, str(int(sig)), json.dumps(argv), json.dumps(env)],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert "error" not in got, got
    assert (got["left"], got["outlived"]) == ([], []), got
    assert got["code"] == 128 + sig, got["stderr"]
    assert '"code":"interrupted"' in got["stdout"], got["stdout"]
    assert "Traceback" not in got["stderr"], got["stderr"]
