"""Hostile conditions for collect and for every writer (issue 19, collect/output/environment half).

Every case asserts the documented exit code, no traceback of hotspot's own on stderr (the profiled
program's output is streamed prefixed "[phase] |" and may hold one), the JSON error envelope under
--format json, and that the user's pre-existing files are byte-identical afterwards.

Signals and races run `hotspot collect` as real processes under the fake rocprofv3
(tests/fake_rocprofv3), which forwards signals the way the real tool does. Full disks are small
tmpfs mounts (root only, else skipped with the reason); file size limits are RLIMIT_FSIZE with
SIGXFSZ ignored, so a write gets EFBIG.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fake_rocprofv3.helpers import app, fake  # noqa: F401  (fixture)
from tests.fixtures.trace.sqlite_builders import build_rocpd_db, build_rtl_db

HOTSPOT = [sys.executable, "-m", "hotspot"]
SIGNALS = [pytest.param(signal.SIGTERM, 143, id="SIGTERM"), pytest.param(signal.SIGHUP, 129, id="SIGHUP"),
           pytest.param(signal.SIGINT, 130, id="SIGINT")]


# ------------------------------------------------------------------------------------------ helpers

def tree_hashes(root: Path) -> dict[str, str]:
    """Every entry under `root` (symlinks not followed): file sha256, link target, or 'dir'."""
    out: dict[str, str] = {}
    if root.is_file():
        return {root.name: hashlib.sha256(root.read_bytes()).hexdigest()}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def assert_untouched(before: dict[str, str], root: Path) -> None:
    after = tree_hashes(root)
    assert {k: after.get(k) for k in before} == before, "a pre-existing file changed or disappeared"


def run(args: list[str], cwd: Path, *, env: dict[str, str] | None = None,
        preexec: Callable[[], None] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*HOTSPOT, *args], cwd=cwd, env=env, preexec_fn=preexec, capture_output=True,
                          text=True, timeout=timeout)


def own_traceback(stderr: str) -> bool:
    """A traceback printed by hotspot itself (child output is prefixed '[phase] | ')."""
    return any(line.startswith("Traceback") for line in stderr.splitlines())


def check_failure(code: int, stdout: str, stderr: str, exit_code: int, error_code: str | None = None,
                  json_mode: bool = True) -> dict:
    assert code == exit_code, stderr
    assert not own_traceback(stderr), stderr
    if not json_mode:
        assert stdout.strip() == ""
        return {}
    doc = json.loads(stdout)
    assert doc["ok"] is False and doc["error"]["exit_code"] == exit_code, doc
    if error_code is not None:
        assert doc["error"]["code"] == error_code, doc
    assert doc["error"]["message"] and stderr.strip().splitlines()[-1].startswith("hotspot")
    return doc["error"]


def pgid_alive(pgid: int) -> bool:
    """Any live (non-zombie) process in this process group."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def wait_until(pred: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {pred}")
        time.sleep(0.05)


def fsize_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """mount(size) -> a fresh tmpfs of that size (root only; skipped otherwise)."""
    mounts: list[Path] = []

    def mount(size: str, options: str = "") -> Path:
        where = tmp_path / f"fs{len(mounts)}"
        where.mkdir()
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}{options}", "tmpfs", str(where)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here (needs root): {res.stderr.strip()}")
        mounts.append(where)
        return where

    yield mount
    for m in reversed(mounts):
        subprocess.run(["umount", "-l", str(m)], capture_output=True)


@pytest.fixture
def readonly_dir(tmp_path: Path, small_fs) -> Path:
    """A directory nobody may write: a read-only tmpfs as root (root ignores permission bits),
    else a mode 0555 directory."""
    if os.geteuid() == 0:
        return small_fs("64k", ",ro")
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    return d


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch

    return make_dispatch(tmp_path / "cap", DispatchSpec(kernel="gemm", waves=6,
                                                        program=InstructionMix().scaled(30)))


# ------------------------------------------------------------------------------------------ signals

def _slow_app(pidfile: Path, *, ignore: bool = False, sleep_s: float = 30) -> list[str]:
    """Writes 'pid pgid' to pidfile once running, then sleeps; `ignore`: SIGTERM/SIGINT ignored."""
    return app("import os, signal, time",
               *(["signal.signal(signal.SIGTERM, signal.SIG_IGN)", "signal.signal(signal.SIGINT, signal.SIG_IGN)"]
                 if ignore else []),
               f"open({str(pidfile)!r} + '.tmp', 'w').write(f'{{os.getpid()}} {{os.getpgid(0)}}')",
               f"os.replace({str(pidfile)!r} + '.tmp', {str(pidfile)!r})",
               f"time.sleep({sleep_s})")


def _start_collect(root: Path, out: Path, app_argv: list[str], fmt: str = "json",
                   env: dict[str, str] | None = None,
                   preexec: Callable[[], None] | None = None) -> subprocess.Popen:
    return subprocess.Popen([*HOTSPOT, "collect", "--kernel", "gemm", "--no-analyze", "--output", str(out),
                             "--format", fmt, "--", *app_argv], cwd=root, env=env, preexec_fn=preexec,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _app_ids(pidfile: Path) -> tuple[int, int]:
    wait_until(pidfile.exists, 30)
    pid, pgid = pidfile.read_text().split()
    return int(pid), int(pgid)


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("sig,code", SIGNALS)
def test_signal_stops_the_group_and_marks_the_run_interrupted(fake, tmp_path, sig, code, fmt):
    mine = fake.root / "notes.txt"
    mine.write_text("the user's file")
    before = tree_hashes(fake.root)
    out, pidfile = fake.root / "run", tmp_path / "app.pid"
    p = _start_collect(fake.root, out, _slow_app(pidfile), fmt)
    try:
        _, pgid = _app_ids(pidfile)
        assert pgid != os.getpgid(p.pid)  # rocprofv3 and the app run in their own group
        t0 = time.monotonic()
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert time.monotonic() - t0 < 15  # the app (sleeping 30 s) was stopped, not waited out
    err = check_failure(p.returncode, stdout, stderr, code, "interrupted", json_mode=fmt == "json")
    if err:
        assert err["details"]["signal"] == sig and err["details"]["run_dir"] == str(out)
    assert signal.Signals(sig).name in stderr.splitlines()[-1]
    rec = json.loads((out / "run.json").read_text())
    assert rec["status"] == "interrupted" and rec["phases"][-1]["status"] == "interrupted"
    assert rec["error"]["exit_code"] == code
    wait_until(lambda: not pgid_alive(pgid), 10)  # nothing of the group survives
    assert_untouched(before, fake.root)


@pytest.mark.parametrize("how", ["grace-then-kill", "second-signal-kills"])
def test_a_child_ignoring_sigterm_is_killed(fake, tmp_path, how):
    out, pidfile = fake.root / "run", tmp_path / "app.pid"
    env = dict(os.environ, HOTSPOT_INTERRUPT_GRACE_S="1" if how == "grace-then-kill" else "60")
    p = _start_collect(fake.root, out, _slow_app(pidfile, ignore=True), env=env)
    try:
        pid, pgid = _app_ids(pidfile)
        p.send_signal(signal.SIGTERM)
        if how == "second-signal-kills":
            time.sleep(0.5)
            assert p.poll() is None and pgid_alive(pgid)  # waiting for the stubborn app
            p.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        stdout, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert time.monotonic() - t0 < 10
    check_failure(p.returncode, stdout, stderr, 143, "interrupted")
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    wait_until(lambda: not pgid_alive(pgid), 10)


def test_sighup_ignored_by_nohup_stays_ignored(fake, tmp_path):
    out, pidfile = fake.root / "run", tmp_path / "app.pid"
    p = _start_collect(fake.root, out, _slow_app(pidfile, sleep_s=1.5),
                       preexec=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    try:
        _app_ids(pidfile)
        p.send_signal(signal.SIGHUP)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, stderr
    assert json.loads(stdout)["ok"] is True
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("sig,code", SIGNALS)
def test_any_command_prints_the_envelope_when_signalled(tmp_path, sig, code):
    """Outside collect too: a command stopped by a signal exits 128+N with one JSON document."""
    gate = tmp_path / "gate"
    script = (
        "import sys, time\n"
        "import hotspot.commands._run as r\n"
        "orig = r.run\n"
        "def slow(command, fmt, produce, renderers=None):\n"
        f"    def waiting():\n        open({str(gate)!r}, 'w').close()\n        time.sleep(30)\n"
        "    return orig(command, fmt, waiting, renderers)\n"
        "r.run = slow\n"
        "from hotspot.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")
    p = subprocess.Popen([sys.executable, "-c", script, "doctor", "--format", "json"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(gate.exists, 30)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = check_failure(p.returncode, stdout, stderr, code, "interrupted")
    assert json.loads(stdout)["command"] == "doctor" and err["details"]["signal"] == sig


# ------------------------------------------------------------------------------------------ races

def _collect_argv(out: Path | None, fmt: str = "json", kernel: str | None = "gemm") -> list[str]:
    return [*HOTSPOT, "collect", *(["--kernel", kernel] if kernel else []), "--no-analyze",
            *(["--output", str(out)] if out else []), "--format", fmt, "--", *app("import time", "time.sleep(0.3)")]


def _run_together(root: Path, argvs: list[list[str]]) -> list[tuple[int, str, str]]:
    procs = [subprocess.Popen(a, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for a in argvs]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        results.append((p.returncode, out, err))
    return results


@pytest.mark.parametrize("n,existing", [(2, False), (4, False), (8, False), (4, True)],
                         ids=["2-new", "4-new", "8-new", "4-existing-empty"])
def test_concurrent_collects_on_one_output_exactly_one_proceeds(fake, n, existing):
    out = fake.root / "run"
    if existing:
        out.mkdir()
    results = _run_together(fake.root, [_collect_argv(out) for _ in range(n)])
    winners = [r for r in results if r[0] == 0]
    assert len(winners) == 1, [(r[0], r[2][-300:]) for r in results]
    for code, stdout, stderr in results:
        if code != 0:
            err = check_failure(code, stdout, stderr, 3, "run-dir-exists")
            assert "exists" in err["message"] and str(out) in err["message"]
    rec = json.loads((out / "run.json").read_text())
    assert rec["status"] == "complete" and rec["run_dir"] == str(out)
    assert json.loads(winners[0][1])["data"]["run_dir"] == str(out)
    # the losers ran nothing: one profiled run (the winner's ATT phase), one phase in run.json
    att_runs = [c for c in fake.calls() if "-i" in c["argv"]]
    assert len(att_runs) == 1 and [ph["name"] for ph in rec["phases"]] == ["att"]


@pytest.mark.parametrize("kernel", ["gemm", None], ids=["named-by-regex", "named-after-discovery"])
def test_concurrent_auto_named_runs_never_share_a_directory(fake, kernel):
    mine = fake.root / "notes.txt"
    mine.write_text("x")
    before = tree_hashes(fake.root)
    n = 3
    results = _run_together(fake.root, [_collect_argv(None, kernel=kernel) for _ in range(n)])
    assert [r[0] for r in results] == [0] * n, [r[2][-500:] for r in results]
    dirs = [json.loads(r[1])["data"]["run_dir"] for r in results]
    assert len(set(dirs)) == n and sorted(dirs) == [str(p) for p in fake.runs()]
    for d in dirs:
        rec = json.loads((Path(d) / "run.json").read_text())
        assert rec["run_dir"] == d and rec["status"] == "complete"
        assert all(ph["stdout"].startswith(d + "/") for ph in rec["phases"])
    assert_untouched(before, fake.root)


# ------------------------------------------------------------------------------------------ usage

USAGE = [
    ("pmc-preset-unknown", ["--pmc-preset", "unknown"]),
    ("skip-bad-regex", ["--skip", "("]),
    ("skip-second-bad-regex", ["--skip", "ok", "--skip", "a)"]),
    ("kernel-bad-regex", ["--kernel", "("]),
    ("kernel-bad-class", ["--kernel", "[a-"]),
    ("pmc-bad-name", ["--pmc", "TCC_HIT_sum,HIT!"]),
    ("iterations-zero", ["--iterations", "0"]),
    ("iterations-garbage", ["--iterations", "abc"]),
    ("env-no-equals", ["--env", "NOEQUALS"]),
    ("se-mask-zero", ["--se-mask", "0"]),
    ("timeout-zero", ["--timeout", "0"]),
    ("buffer-size-zero", ["--buffer-size", "0"]),
    ("buffer-size-garbage", ["--buffer-size", "lots"]),
    ("target-cu-garbage", ["--target-cu", "one"]),
    ("no-att-nothing-to-collect", ["--no-att"]),
    ("preset-arch-unknown", ["--kernel", "gemm", "--pmc-preset", "l2", "--arch", "gfx000"]),
    ("no-command", None),
]


@pytest.mark.parametrize("args", [pytest.param(a, id=i) for i, a in USAGE])
def test_usage_errors_create_nothing(cli, fake, args):
    mine = fake.root / "notes.txt"
    mine.write_text("x")
    before = tree_hashes(fake.root)
    argv = ["collect", "--kernel", "gemm", "--format", "json"] if args is None else \
        ["collect", *args, "--format", "json", "--", *app()]
    res = cli(*argv)
    check_failure(res.exit_code, res.stdout, res.stderr, 2, "usage")
    assert not (fake.root / "hotspot-runs").exists() and fake.calls() == []
    assert tree_hashes(fake.root) == before  # nothing created, nothing changed


# ------------------------------------------------------------------------------------------ environment

def test_unwritable_cwd_is_exit_3_naming_it(cli, fake, readonly_dir, monkeypatch):
    monkeypatch.chdir(readonly_dir)
    res = cli("collect", "--kernel", "gemm", "--format", "json", "--", *app())
    err = check_failure(res.exit_code, res.stdout, res.stderr, 3, "permission-denied")
    assert str(readonly_dir / "hotspot-runs") in err["message"] and "--output" in err["hint"]
    assert fake.calls() == [] and os.listdir(readonly_dir) == []


@pytest.mark.parametrize("where", ["parent", "grandparent"])
def test_unwritable_output_parent_is_exit_3(cli, fake, readonly_dir, where):
    out = readonly_dir / "run" if where == "parent" else readonly_dir / "a" / "run"
    res = cli("collect", "--kernel", "gemm", "--output", str(out), "--format", "json", "--", *app())
    err = check_failure(res.exit_code, res.stdout, res.stderr, 3, "permission-denied")
    assert str(readonly_dir) in err["message"]
    assert fake.calls() == [] and os.listdir(readonly_dir) == []


@pytest.mark.parametrize("kind", ["file", "non-empty-dir", "parent-is-a-file", "symlink-to-file"])
def test_output_that_is_the_users_is_refused_and_untouched(cli, fake, kind):
    mine = fake.root / "mine"
    if kind == "non-empty-dir":
        mine.mkdir()
        (mine / "data.txt").write_text("keep")
        out = mine
    else:
        mine.write_text("keep")
        out = {"file": mine, "parent-is-a-file": mine / "run"}.get(kind)
        if kind == "symlink-to-file":
            out = fake.root / "link"
            out.symlink_to(mine)
    before = tree_hashes(fake.root)
    res = cli("collect", "--kernel", "gemm", "--output", str(out), "--format", "json", "--", *app())
    err = check_failure(res.exit_code, res.stdout, res.stderr, 3)
    assert "exists" in err["message"]
    assert tree_hashes(fake.root) == before and fake.calls() == []


@pytest.mark.parametrize("size", ["4k", "16k", "64k"])
def test_collect_on_a_full_disk_is_exit_3(fake, small_fs, size):
    fs = small_fs(size)
    (fs / "mine.txt").write_text("the user's file")
    before = tree_hashes(fs)
    res = run(["collect", "--format", "json", "--", *app()], cwd=fs)
    err = check_failure(res.returncode, res.stdout, res.stderr, 3, "disk-full")
    assert str(fs) in err["message"]
    assert_untouched(before, fs)
    assert not [p for p in fs.rglob("*") if p.name.endswith(".tmp")]  # no half-written file of ours


@pytest.mark.parametrize("limit", [100, 2000])
def test_collect_under_a_file_size_limit_is_exit_3(fake, limit):
    res = run(["collect", "--format", "json", "--", *app()], cwd=fake.root, preexec=fsize_limit(limit))
    err = check_failure(res.returncode, res.stdout, res.stderr, 3, "disk-full")
    assert "File too large" in err["message"]
    assert not [p for p in fake.root.rglob("*") if p.name.endswith(".tmp")]


def _writer_argv(command: str, capture: Path, out: Path) -> list[str]:
    head = ["report"] if command == "report" else ["export", "perfetto"]
    return [*head, str(capture), "-o", str(out), "--format", "json"]


@pytest.mark.parametrize("command", ["report", "export"])
@pytest.mark.parametrize("existing", [False, True], ids=["new", "force-over-old"])
def test_writer_on_a_full_disk_leaves_no_partial_file(capture, small_fs, command, existing):
    fs = small_fs("64k")
    out = fs / "out.file"
    (fs / "mine.txt").write_text("the user's file")
    if existing:
        out.write_text("the previous output")
    before, cap_before = tree_hashes(fs), tree_hashes(capture)
    res = run([*_writer_argv(command, capture, out), *(["--force"] if existing else [])], cwd=capture.parent)
    err = check_failure(res.returncode, res.stdout, res.stderr, 3, "disk-full")
    assert err["message"].startswith(str(out)) and "nothing was written" in err["hint"]
    assert tree_hashes(fs) == before  # the old output intact, no temporary left
    assert tree_hashes(capture) == cap_before


@pytest.mark.parametrize("command", ["report", "export"])
def test_writer_under_a_file_size_limit_is_exit_3(capture, tmp_path, command):
    out = tmp_path / "outdir" / "out.file"
    out.parent.mkdir()
    res = run(_writer_argv(command, capture, out), cwd=tmp_path, preexec=fsize_limit(2000))
    check_failure(res.returncode, res.stdout, res.stderr, 3, "disk-full")
    assert os.listdir(out.parent) == []


@pytest.mark.parametrize("command", ["report", "export"])
def test_writer_into_a_read_only_folder_is_exit_3(cli, capture, readonly_dir, command):
    out = readonly_dir / "out.file"
    res = cli(*_writer_argv(command, capture, out))
    err = check_failure(res.exit_code, res.stdout, res.stderr, 3, "permission-denied")
    assert str(out) in err["message"] and os.listdir(readonly_dir) == []


def test_skill_install_into_a_read_only_folder_is_exit_3(cli, readonly_dir):
    res = cli("skill", "install", "--dest", str(readonly_dir / "skill"), "--format", "json")
    check_failure(res.exit_code, res.stdout, res.stderr, 3, "permission-denied")
    assert os.listdir(readonly_dir) == []


# ------------------------------------------------------------------------------------------ sqlite

def _wal(db: Path) -> Path:
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    con.close()
    return db


def _rocpd_counters(db: Path) -> Path:
    con = sqlite3.connect(db)
    con.executescript("""
        create table rocpd_info_agent(id integer, name text, product_name text, type text);
        insert into rocpd_info_agent values (1, 'gfx942', 'AMD Instinct MI300X', 'GPU');
        create table cc(dispatch_id integer, kernel_name text, counter_name text, value real,
                        start integer, "end" integer, agent_id integer);
        insert into cc values (1, 'k', 'TCC_HIT', 3, 100, 1100, 1), (1, 'k', 'TCC_MISS', 1, 100, 1100, 1);
        create view counters_collection as select * from cc;
    """)
    con.commit()
    con.close()
    return db


DBS = {
    "rocpd-counters": (lambda d: _rocpd_counters(d / "1_results.db"), ["pmc"]),
    "rocpd-trace": (lambda d: build_rocpd_db(d / "2_results.db", [("gemm", 1, 10, 20, 2, 0, 8, 0, 16, 0)], []),
                    ["kernels"]),
    "rtl-trace": (lambda d: build_rtl_db(d / "trace.db", [(0, "KernelExecution", "gemm", 100, 300)]), ["kernels"]),
}


@pytest.mark.parametrize("kind", list(DBS))
def test_wal_database_is_read_without_anything_appearing_beside_it(cli, tmp_path, kind):
    folder = tmp_path / "db"
    folder.mkdir()
    build, command = DBS[kind]
    db = _wal(build(folder))
    before = tree_hashes(folder)
    # the control: sqlite's plain read-only mode does create side files in a writable folder
    probe = tmp_path / "probe"
    shutil.copytree(folder, probe)
    con = sqlite3.connect(f"file:{probe / db.name}?mode=ro", uri=True)
    con.execute("select count(*) from sqlite_master").fetchone()
    assert sorted(os.listdir(probe)) != sorted(before)
    con.close()
    res = cli(*command, str(db), "--format", "json")
    assert res.exit_code == 0, res.stderr
    assert not own_traceback(res.stderr) and json.loads(res.stdout)["ok"] is True
    assert tree_hashes(folder) == before  # no -shm, no -wal, nothing modified


def test_hot_wal_is_read_from_a_private_copy(cli, tmp_path):
    folder = tmp_path / "db"
    folder.mkdir()
    db = _wal(_rocpd_counters(folder / "1_results.db"))
    writer = sqlite3.connect(db)  # still open: its last commit lives only in the -wal
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("update cc set value = 9 where counter_name = 'TCC_HIT'")
    writer.commit()
    try:
        before = tree_hashes(folder)
        assert any(name.endswith("-wal") for name in before)
        res = cli("pmc", str(db), "--format", "json")
        assert res.exit_code == 0 and not own_traceback(res.stderr), res.stderr
        k = json.loads(res.stdout)["data"]["kernels"][0]
        assert k["l2_hit_pct"] == pytest.approx(90.0)  # 9 / (9 + 1): the row only the -wal has
        assert tree_hashes(folder) == before
    finally:
        writer.close()


# ------------------------------------------------------------------------------------------ output == input

def _alias(capture: Path, how: str, name: str = "code.json") -> Path:
    real = capture / name
    if how == "same":
        return real
    if how == "dotdot":
        return capture / ".." / capture.name / name
    alias = capture.parent / f"alias-{how}.json"
    if how == "symlink":
        alias.symlink_to(real)
    else:
        os.link(real, alias)
    return alias


@pytest.mark.parametrize("command", ["report", "export"])
@pytest.mark.parametrize("how,name", [("same", "code.json"), ("symlink", "code.json"), ("dotdot", "code.json"),
                                      ("hardlink", "code.json"), ("same", "se0_sm0_sl0_wv0.json"),
                                      ("same", "filenames.json")])
def test_output_that_is_an_input_is_refused_even_with_force(cli, capture, command, how, name):
    target = _alias(capture, how, name)
    before = tree_hashes(capture.parent)
    res = cli(*_writer_argv(command, capture, target), "--force")
    err = check_failure(res.exit_code, res.stdout, res.stderr, 3, "output-is-input")
    assert str(target) in err["message"] and name in err["details"]["input"]
    assert "--force" in err["message"]
    assert tree_hashes(capture.parent) == before


def test_sweep_dashboard_onto_its_manifest_is_refused(fake, tmp_path):
    from tests.sweep_support import entry, write_recipes

    recipes = write_recipes(fake.root / "r.yaml", [entry("a", 0, tmp_path / "rec.jsonl")])
    sw = fake.root / "sw"
    prep = run(["sweep", str(recipes), "-o", str(sw), "--slurm", "--dry-run"], cwd=fake.root)
    assert prep.returncode == 0, prep.stderr
    before = tree_hashes(sw)
    res = run(["sweep", "report", str(sw), "--html", str(sw / "sweep.json"), "--force", "--format", "json"],
              cwd=fake.root)
    err = check_failure(res.returncode, res.stdout, res.stderr, 3, "output-is-input")
    assert "sweep.json" in err["details"]["input"]
    assert tree_hashes(sw) == before


def test_skill_install_onto_the_packaged_skill_is_refused(cli, tmp_path):
    from hotspot.skill.install import skill_dir

    other = next(p for p in sorted(skill_dir().rglob("*.md")) if p.name != "SKILL.md")
    before = hashlib.sha256(other.read_bytes()).hexdigest()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "SKILL.md").symlink_to(other)  # with --force, SKILL.md would have been written through it
    res = cli("skill", "install", "--dest", str(dest), "--force", "--format", "json")
    err = check_failure(res.exit_code, res.stdout, res.stderr, 3, "output-is-input")
    assert str(dest / "SKILL.md") in err["message"]
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("sig,code", SIGNALS[:2])
def test_sweep_under_sigterm_and_sighup_exits_128_plus_n(fake, tmp_path, sig, code):
    from tests.sweep_support import entry, pid_alive, records, states, write_recipes

    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    recipes = write_recipes(fake.root / "r.yaml", [entry(n, f"@{gate}", rec) for n in ("a", "b", "c")])
    sw = fake.root / "sw"
    p = subprocess.Popen([*HOTSPOT, "sweep", str(recipes), "-o", str(sw), "--gpus", "0", "--format", "json"],
                         cwd=fake.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: any("started" in r for r in records(rec)), 60)
        app_pids = [r["pid"] for r in records(rec) if "started" in r]
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = check_failure(p.returncode, stdout, stderr, code, "interrupted")
    assert err["details"]["signal"] == sig
    assert sorted(states(sw).values()) == ["interrupted", "pending", "pending"]
    wait_until(lambda: not any(pid_alive(pid) for pid in app_pids), 10)  # the applications are gone


@pytest.mark.parametrize("sig,code", SIGNALS)
def test_signal_between_phases_marks_the_run_interrupted(fake, tmp_path, sig, code):
    """During the analysis of the best dispatch (no child running): the same exit and record."""
    gate, out = tmp_path / "gate", fake.root / "run"
    script = (
        "import sys, time\n"
        "from hotspot.collect.api import Collector\n"
        "def slow(self, best):\n"
        f"    open({str(gate)!r}, 'w').close()\n"
        "    time.sleep(30)\n"
        "Collector._analyze = slow\n"
        "from hotspot.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")
    p = subprocess.Popen([sys.executable, "-c", script, "collect", "--kernel", "gemm", "--output", str(out),
                          "--format", "json", "--", *app()], cwd=fake.root,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(gate.exists, 60)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = check_failure(p.returncode, stdout, stderr, code, "interrupted")
    assert err["details"]["run_json"] == str(out / "run.json")
    rec = json.loads((out / "run.json").read_text())
    assert rec["status"] == "interrupted" and rec["error"]["exit_code"] == code
    assert [ph["status"] for ph in rec["phases"]] == ["ok"]  # the ATT phase itself had finished


def test_report_of_a_saved_result_onto_itself_is_refused_before_the_analysis(cli, capture, tmp_path):
    saved = tmp_path / "a.json"
    res = cli("analyze", str(capture), "--format", "json", "--topk", "0")
    assert res.exit_code == 0, res.stderr
    saved.write_text(res.stdout)
    link = tmp_path / "link.html"
    link.symlink_to(saved)
    before = tree_hashes(tmp_path / "a.json")
    for target in (saved, link):
        res = cli("report", str(saved), "-o", str(target), "--force", "--format", "json")
        err = check_failure(res.exit_code, res.stdout, res.stderr, 3, "output-is-input")
        assert err["details"] == {"output": str(target), "input": str(saved)}
    assert tree_hashes(saved) == before and link.is_symlink()
