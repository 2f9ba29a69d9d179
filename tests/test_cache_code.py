"""The result cache and the code that computes its results (docs/cache.md, "When an entry is used"):
a process whose code files changed after it loaded them stores nothing (a long-lived MCP server or
a notebook after an edit or an upgrade); the per-command memo of confirmed signatures is per
command, not per process (the MCP server runs calls in threads at once); the standard library is
told from installed packages by sysconfig's paths, and hotspot's version is in the derived key."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
import types
from pathlib import Path

import pytest

from hotspot.cache import deps, derived, output, store
from tests.conftest import PROJECT_ROOT


def _entries(folder: Path, kind: str) -> list[Path]:
    return sorted(folder.glob(f"{kind}-*.entry")) if folder.is_dir() else []


def _loaded_module(monkeypatch, path: Path, name: str = "hotspot_probe_algo") -> types.ModuleType:
    """A module loaded from `path` (as an import would leave it in sys.modules)."""
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    monkeypatch.setitem(sys.modules, name, mod)
    return mod


# ------------------------------------------------------------------ code edited while a process runs

SCRIPT = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, sys.argv[2])
    algo_py = os.path.join(sys.argv[2], "algo.py")
    from hotspot.cache import derived
    from hotspot.capture.session import capture_session

    def write(version, age_s):
        with open(algo_py, "w") as fh:
            fh.write(f"VERSION = {version!r}\\n")
        past = time.time() - age_s
        os.utime(algo_py, (past, past))

    if sys.argv[1] == "server":
        time.sleep(0.05)                 # the server has run a while (file times: a coarse clock)
        write("old", 100)
        import algo                      # loaded when the server starts
        write("new", 50)                 # edited while it runs (an editable install), minutes ago
    else:
        import algo
    for _ in range(2):                   # two stores: the note is said once
        with capture_session():
            print(derived.cached("probe", ("k",), lambda w: algo.VERSION, []))
""")


def test_a_process_whose_code_changed_since_it_started_stores_nothing(tmp_path):
    """The reviewer's reproduction: a server loads `algo`, the file is edited (its mtime even put
    in the past), the server computes with the old code. Before the fix it stored that result
    under the new file's signature and a fresh process running the new code was served 'old'."""
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    mods = tmp_path / "mods"
    mods.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), store.CACHE_ENV: "on",
           "PYTHONPATH": str(PROJECT_ROOT), "PYTHONDONTWRITEBYTECODE": "1"}

    def run(role: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(script), role, str(mods)], env=env,
                              capture_output=True, text=True, timeout=120, check=True)

    server = run("server")
    assert server.stdout.split() == ["old", "old"]  # its loaded code, computed twice: nothing kept
    notes = [line for line in server.stderr.splitlines() if "algo.py" in line]
    assert len(notes) == 1 and "not stored in the cache" in notes[0], server.stderr
    assert not list((tmp_path / "xdg" / "hotspot").glob("probe-*.entry"))
    fresh = run("fresh")
    assert fresh.stdout.split() == ["new", "new"]


def test_code_modified_after_the_start_stops_storing_until_it_is_unloaded(cache_on, tmp_path,
                                                                          monkeypatch, capsys):
    src = tmp_path / "algo.py"
    src.write_text("VERSION = 1\n")
    calls: list[int] = []

    def compute(warnings: list[str]) -> int:
        calls.append(1)
        return 7

    def started_after_every_file() -> int:
        """Pretend the process started now, past the margin: after every file's last change."""
        ns = max(time.time_ns(), src.stat().st_ctime_ns) + deps.RACY_NS + 1
        monkeypatch.setattr(deps, "_started_memo", {"ns": ns}, raising=False)
        return ns

    def entries() -> int:
        return len(_entries(cache_on, "probe"))

    mod = _loaded_module(monkeypatch, src)
    started = started_after_every_file()
    assert [derived.cached("probe", ("a",), compute, []) for _ in range(2)] == [7, 7]
    assert len(calls) == 1 and entries() == 1  # code older than the process: stored, then a hit

    os.utime(src, ns=(started + 10**9, started + 10**9))  # edited after the process started
    started_after_every_file()  # (utime changed the ctime: mtime alone says it)
    assert [derived.cached("probe", ("b",), compute, []) for _ in range(2)] == [7, 7]
    assert len(calls) == 3 and entries() == 1
    err = capsys.readouterr().err
    assert err.count(str(src)) == 1 and "not stored in the cache" in err  # said once

    monkeypatch.delitem(sys.modules, mod.__name__)  # what remains loaded is unchanged: stored
    assert [derived.cached("probe", ("b",), compute, []) for _ in range(2)] == [7, 7]
    assert len(calls) == 4 and entries() == 2
    monkeypatch.setitem(sys.modules, mod.__name__, mod)

    # a whole-second timestamp within RACY_NS before the start: not stored (a coarse file system
    # may have rounded a later edit down); the start is put far enough ahead that the ctimes
    # utime() leaves stay below the limit
    limit = (time.time_ns() // 10**9 + 30) * 10**9
    monkeypatch.setattr(deps, "_started_memo", {"ns": limit + deps.RACY_NS}, raising=False)
    os.utime(src, ns=(limit, limit))
    assert derived.cached("probe", ("c",), compute, []) == 7 and entries() == 2
    os.utime(src, ns=(limit - 10**9, limit - 10**9))
    assert derived.cached("probe", ("c",), compute, []) == 7 and entries() == 3
    # a fine timestamp just before the start is the file loaded (`pip install -e . && hotspot`):
    # stored; one after it is not
    monkeypatch.setattr(deps, "_started_memo", {"ns": limit + 5 * 10**9 + 123}, raising=False)
    os.utime(src, ns=(limit + 5 * 10**9 - 7, limit + 5 * 10**9 - 7))
    assert derived.cached("probe", ("d",), compute, []) == 7 and entries() == 4
    os.utime(src, ns=(limit + 6 * 10**9 + 1, limit + 6 * 10**9 + 1))
    assert derived.cached("probe", ("e",), compute, []) == 7 and entries() == 4
    assert "not stored" not in capsys.readouterr().err  # said once per process


def test_the_output_cache_does_not_store_either(cache_on, tmp_path, monkeypatch, capsys):
    src = tmp_path / "algo.py"
    src.write_text("VERSION = 1\n")
    started = time.time_ns() + deps.RACY_NS + 1  # after every file's last change
    os.utime(src, ns=(started + 10**9, started + 10**9))  # ... but this one's: edited since
    monkeypatch.setattr(deps, "_started_memo", {"ns": started}, raising=False)
    _loaded_module(monkeypatch, src)
    argv = ["kernels", str(tmp_path / "none"), "--format", "json"]
    plan = output.plan(argv)
    assert plan is not None

    def run(args: list[str]) -> int:
        sys.stdout.write("printed\n")
        return 0

    assert output.run_and_store(plan, run, argv) == 0
    assert not _entries(cache_on, "out")
    monkeypatch.setattr(deps, "_started_memo", {"ns": started + 10**9 + deps.RACY_NS + 1}, raising=False)
    assert output.run_and_store(plan, run, argv) == 0
    assert len(_entries(cache_on, "out")) == 1
    assert capsys.readouterr().out == "printed\nprinted\n"


def test_process_start_is_when_the_process_loaded_hotspot(tmp_path):
    """The start is when the process first loaded hotspot: after it was spawned (and before it
    asks). Not the process's start in /proc, which a shell's exec keeps: in
    `bash -c "pip install ... && hotspot ..."` that is before pip wrote the files hotspot runs, and
    every one of them looked edited since (the quick start stored nothing and said so)."""
    script = tmp_path / "late.py"
    script.write_text("import sys, time\nfrom hotspot.cache import deps\n"
                      "print(deps.process_started_ns(), time.time_ns())\n")
    spawned = time.time_ns()
    # the shell sleeps, then execs python in its own process (the last command of `-c`)
    run = subprocess.run(["bash", "-c", f"sleep 0.3; exec {sys.executable} {script}"],
                         env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}, capture_output=True,
                         text=True, check=True, timeout=60)
    returned = time.time_ns()
    started, later = map(int, run.stdout.split())
    assert spawned + 300_000_000 <= started <= later <= returned


# ------------------------------------------------------------------ the per-command memo and threads

def test_a_command_in_another_thread_does_not_lend_its_memo(tmp_path):
    """The reviewer's race: thread Y, inside a long command, confirmed F's signature; F is
    rewritten; thread X (another MCP call) must see the change. Before the fix the memo was one
    process-wide stack, and X read Y's."""
    f = tmp_path / "capture.bin"
    f.write_bytes(b"old capture")
    s1 = deps.signature(str(f))
    started, release = threading.Event(), threading.Event()

    def long_command() -> None:
        with deps.one_command():
            assert deps.unchanged([str(f)], [s1])
            started.set()
            release.wait(30)

    y = threading.Thread(target=long_command)
    y.start()
    try:
        assert started.wait(30)
        f.write_bytes(b"NEW capture, re-collected")
        assert deps.signature(str(f)) != s1
        seen: list[object] = []

        def other_call() -> None:
            seen.append(deps.unchanged([str(f)], [s1]))
            seen.append(deps.code_signatures([str(f)]) == [s1])
            with deps.one_command():
                seen.append(deps.unchanged([str(f)], [s1]))

        x = threading.Thread(target=other_call)
        x.start()
        x.join(30)
        assert seen == [False, False, False]
    finally:
        release.set()
        y.join(30)


def test_overlapping_commands_keep_their_own_memo(tmp_path):
    """Y enters, X enters, Y ends while X runs: X keeps its memo (a process-wide stack popped X's
    dict at Y's exit, and X then read Y's, which never saw f)."""
    f, g = tmp_path / "code.py", tmp_path / "other.py"
    f.write_text("x = 1\n")
    g.write_text("y = 1\n")
    y_in, x_in, y_out, x_checked = (threading.Event() for _ in range(4))
    got: dict[str, object] = {}

    def y() -> None:
        with deps.one_command():
            deps.code_signatures([str(g)])
            y_in.set()
            x_in.wait(30)
        y_out.set()

    def x() -> None:
        y_in.wait(30)
        with deps.one_command():
            first = deps.code_signatures([str(f)])
            x_in.set()
            y_out.wait(30)
            os.utime(f, ns=(1, 1))  # edited while X runs: X keeps the code it started with
            got["x"] = deps.code_signatures([str(f)]) == first
            x_checked.set()

    threads = [threading.Thread(target=y), threading.Thread(target=x)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert got == {"x": True}
    assert deps.code_signatures([str(f)]) == [deps.signature(str(f))]  # outside: afresh


def test_mcp_worker_threads_each_run_with_their_own_memo(tmp_path):
    """The MCP server runs each call with anyio.to_thread.run_sync, which runs it in a copy of the
    caller's context: a memo set by one call is not seen by the next on the same worker thread."""
    anyio = pytest.importorskip("anyio")
    f = tmp_path / "capture.bin"
    f.write_bytes(b"one")
    s1 = deps.signature(str(f))

    def call(rewrite: bytes) -> tuple[bool, bool]:
        before = deps._confirmed.get() is None
        with deps.one_command():
            ok = deps.unchanged([str(f)], [s1])
            if rewrite:
                f.write_bytes(rewrite)
            return before, ok

    async def main() -> list[tuple[bool, bool]]:
        limiter = anyio.CapacityLimiter(1)  # one worker thread, reused
        first = await anyio.to_thread.run_sync(call, b"two, longer", limiter=limiter)
        second = await anyio.to_thread.run_sync(call, b"", limiter=limiter)
        return [first, second]

    assert anyio.run(main) == [(True, True), (True, False)]


def test_the_memo_key_holds_no_module_object():
    import gc
    import weakref

    mod = types.ModuleType("hotspot_probe_gone")
    mod.__file__ = str(PROJECT_ROOT / "hotspot" / "__init__.py")
    mod.__path__ = [str(PROJECT_ROOT / "hotspot")]
    ref = weakref.ref(mod)
    sys.modules[mod.__name__] = mod  # not through monkeypatch: it would keep the module to restore
    try:
        deps.code_files()
        deps._import_dirs()
    finally:
        del sys.modules[mod.__name__]
    del mod
    gc.collect()
    assert ref() is None


# ------------------------------------------------------------------ stdlib vs installed packages

@pytest.mark.parametrize("layout", ["global", "venv"])
def test_installed_packages_inside_the_stdlib_folder_are_code_files(tmp_path, monkeypatch, layout):
    """A global (non-venv) pyenv or Docker install keeps site-packages inside the stdlib folder
    (dirname(os.__file__)); a venv's platstdlib holds its site-packages. Installed packages are
    code files (an upgrade invalidates), the standard library is not (the interpreter's version
    stands for it). Before the fix every file under dirname(os.__file__) was left out."""
    import sysconfig

    lib = tmp_path / "py" / "lib" / "python3.x"
    venv_lib = tmp_path / "venv" / "lib" / "python3.x"
    site = (lib if layout == "global" else venv_lib) / "site-packages"
    real_paths = sysconfig.get_paths()
    fake = {**real_paths, "stdlib": str(lib), "platstdlib": str(lib if layout == "global" else venv_lib),
            "purelib": str(site), "platlib": str(site)}
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: dict(fake))
    monkeypatch.setattr(os, "__file__", str(lib / "os.py"))
    monkeypatch.setattr(deps, "_roots_memo", {}, raising=False)
    monkeypatch.setattr(deps, "_code_files_memo", {})
    files = {"stdlib_probe": lib / "json_probe" / "__init__.py",
             "dynload_probe": lib / "lib-dynload" / "probe.so",
             "pkg_probe": site / "hotspot_probe_pkg" / "algo.py",
             "sibling_probe": tmp_path / "py" / "lib" / "python3.xy" / "other.py"}
    for name, path in files.items():
        _loaded_module(monkeypatch, path, name)
    code = deps.code_files()
    assert str(files["pkg_probe"]) in code and str(files["sibling_probe"]) in code
    assert str(files["stdlib_probe"]) not in code and str(files["dynload_probe"]) not in code
    assert not any(c.startswith(str(lib) + os.sep) and not c.startswith(str(site)) for c in code)


def test_an_upgrade_to_another_version_misses_derived_entries(cache_on, monkeypatch):
    """hotspot's version is part of the derived key: an upgrade whose files could not be checked
    still recomputes."""
    import hotspot._version as version

    calls: list[int] = []

    def compute(warnings: list[str]) -> int:
        calls.append(1)
        return 3

    for _ in range(2):
        assert derived.cached("probe", ("v",), compute, []) == 3
    assert len(calls) == 1
    monkeypatch.setattr(version, "__version__", version.__version__ + ".post1")
    assert derived.cached("probe", ("v",), compute, []) == 3
    assert len(calls) == 2
