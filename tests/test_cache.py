"""The result cache (issue 18 point 2; docs/cache.md): byte-identical outputs, invalidation by
every input, corrupt entries rebuilt, concurrent processes, a bounded size, nothing written to a
capture, `--no-cache`/HOTSPOT_CACHE=off, `hotspot cache info|clear`, and the launcher's replay."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hotspot.cache import deps, store
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch
from tests.conftest import PROJECT_ROOT, corpus_path, run_cli

SETTLE_S = deps.RACY_NS / 1e9 + 0.2  # inputs younger than this are not cached (racy files)


def _settle() -> None:
    time.sleep(SETTLE_S)


def _dispatch(root: Path, seed: int = 3, waves: int = 12, agent_info: bool = False) -> Path:
    # three private ancestors: the side-file search never looks into pytest's shared folders
    spec = DispatchSpec(waves=waves, layout=Layout(ses=(0, 1), simds=2, slots=2, other_cus=(0,)),
                        variants=2, program=InstructionMix(loop_trips=3), agent_info=agent_info)
    return make_dispatch(root / "lab" / "runs" / "att", spec, seed=seed)


# The settled captures the module's tests take (the `settled` fixture makes one more, and waits for
# it, if they are short). One worker runs the module: the pool is made once.
POOL_SIZE = 22
pytestmark = pytest.mark.xdist_group("cache")


@pytest.fixture(scope="module")
def _settled_pool(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Path]]:
    """(root, dispatch) pairs made together and settled with one wait (SETTLE_S), not one wait per
    test: a test that takes one gets a capture past the racy window, as if it had waited itself."""
    pool = [(root, _dispatch(root)) for root in (tmp_path_factory.mktemp("settled") for _ in range(POOL_SIZE))]
    _settle()
    return pool



@pytest.fixture
def settled(_settled_pool: list[tuple[Path, Path]], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A capture of this test's own, as `_dispatch(root)` makes it, settled: (root, dispatch)."""
    if not _settled_pool:
        root = tmp_path_factory.mktemp("settled")
        _settled_pool.append((root, _dispatch(root)))
        _settle()
    return _settled_pool.pop()


def _entries(folder: Path, kind: str = "") -> list[Path]:
    return sorted(folder.glob(f"{kind}*.entry")) if folder.is_dir() else []


def _tree(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under root: (size, mtime_ns, sha256): an untouched capture keeps all three."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p)] = (st.st_size, st.st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def _count_core(monkeypatch) -> list[Path]:
    """Calls of the uncached dispatch analysis (a miss computes it, a hit does not)."""
    from hotspot.att import capture_analysis as mod

    calls: list[Path] = []
    real = mod._analyze_core

    def counting(d, opts, warnings):
        calls.append(d)
        return real(d, opts, warnings)

    monkeypatch.setattr(mod, "_analyze_core", counting)
    return calls


def _ok(*args: str) -> str:
    r = run_cli(*args)
    assert r.exit_code == 0, r.stderr
    return r.stdout


# ------------------------------------------------------------------------------ byte identity

COMMANDS = [
    ("analyze", "{d}", "--format", "json"),
    ("analyze", "{d}", "--format", "text"),
    ("analyze", "{d}", "--format", "markdown", "--detail"),
    ("analyze", "{d}", "--plan", "--format", "json", "--topk", "0"),
    ("plan", "{d}", "--format", "json"),
    ("diff", "{d}", "{d}", "--format", "json"),
    ("report", "{d}", "-o", "-"),
]


def _outputs(d: Path) -> list[str]:
    return [_ok(*[a.format(d=d) for a in cmd]) for cmd in COMMANDS]


def test_outputs_identical_cold_warm_and_off(settled, cache_on, tmp_path, monkeypatch):
    _, d = settled
    calls = _count_core(monkeypatch)
    cold = _outputs(d)
    assert calls == [d]  # one wave pass for all seven commands: the first stored it
    assert _entries(cache_on, "dispatch") and _entries(cache_on, "report-views")
    warm = _outputs(d)
    assert calls == [d]
    monkeypatch.setenv(store.CACHE_ENV, "off")
    off = _outputs(d)
    assert len(calls) == 1 + 8  # off: each command computes (diff: both sides)
    assert cold == warm == off


def test_corpus_outputs_identical_with_the_cache(corpus, cache_on, monkeypatch):
    d = corpus_path("att", "gfx950", "vec_add")
    calls = _count_core(monkeypatch)
    cold = _outputs(d)
    warm = _outputs(d)
    assert len(calls) == 1
    monkeypatch.setenv(store.CACHE_ENV, "off")
    assert cold == warm == _outputs(d)


def test_the_capture_is_never_written(settled, cache_on, tmp_path):
    root, d = settled
    before = _tree(root / "lab")
    for _ in range(2):
        _outputs(d)
    assert _tree(root / "lab") == before
    assert all(not p.name.endswith(".entry") for p in (root / "lab").rglob("*"))


# ------------------------------------------------------------------------------ invalidation

def _rewrite_wave(d: Path) -> Path:
    """Change one stall in one wave file, keeping its size: only mtime/ctime tell."""
    wave = sorted(d.glob("se*_sm*_sl*_wv*.json"))[0]
    doc = orjson.loads(wave.read_bytes())
    ins = doc["wave"]["instructions"]
    row = next(r for r in ins if r[2] > 0 and r[2] < 9)
    row[2] += 1
    wave.write_bytes(orjson.dumps(doc))
    return wave


def test_a_changed_wave_file_is_read_again(settled, cache_on, tmp_path, monkeypatch):
    _, d = settled
    calls = _count_core(monkeypatch)
    first = _ok("analyze", str(d), "--format", "json")
    _rewrite_wave(d)
    second = _ok("analyze", str(d), "--format", "json")
    assert len(calls) == 2 and second != first
    monkeypatch.setenv(store.CACHE_ENV, "off")
    assert _ok("analyze", str(d), "--format", "json") == second


def test_a_wave_file_added_or_removed_is_seen(settled, cache_on, tmp_path, monkeypatch):
    _, d = settled
    calls = _count_core(monkeypatch)
    _ok("analyze", str(d), "--format", "json")
    wave = sorted(d.glob("se*_sm*_sl*_wv*.json"))[-1]
    wave.rename(tmp_path / wave.name)
    _ok("analyze", str(d), "--format", "json")
    assert len(calls) == 2


def test_a_side_file_appearing_invalidates_but_unrelated_files_do_not(cache_on, tmp_path,
                                                                      monkeypatch):
    d = _dispatch(tmp_path, agent_info=False)
    _settle()
    calls = _count_core(monkeypatch)
    first = orjson.loads(_ok("analyze", str(d), "--format", "json"))["data"]["arch"]
    # files a side-file search would never pick up, in every searched folder: still a hit
    for folder in (d.parent, d.parent.parent, d.parent.parent.parent):
        (folder / "notes.txt").write_text("x")
        (folder / "kernel_trace.csv.bak").write_text("x")
    _ok("analyze", str(d), "--format", "json")
    assert len(calls) == 1
    # an agent_info.csv two levels up names the GPU and its product: the analysis must see it (the
    # same target the capture's ISA proves: a side file never outranks the ISA, hotspot/arch/decide.py)
    gfx = first["gfx"] or "gfx942"
    (d.parent.parent / "run_agent_info.csv").write_text(
        f"Node_Id,Agent_Type,Name,Product_Name\n1,GPU,{gfx},AMD Instinct Test\n")
    second = orjson.loads(_ok("analyze", str(d), "--format", "json"))["data"]["arch"]
    assert len(calls) == 2
    assert second["gfx"] == gfx and second["product"] == "AMD Instinct Test"
    assert second["source"] != first["source"]


def test_options_that_change_the_analysis_are_part_of_the_key(settled, cache_on, tmp_path, monkeypatch):
    _, d = settled
    calls = _count_core(monkeypatch)
    _ok("analyze", str(d), "--format", "json")
    _ok("analyze", str(d), "--format", "json", "--topk", "3", "--detail")  # display only: hit
    assert len(calls) == 1
    _ok("analyze", str(d), "--format", "json", "--arch", "gfx942")
    _ok("analyze", str(d), "--format", "json", "--max-waves", "4")
    assert len(calls) == 3


def test_files_modified_moments_ago_are_not_stored(cache_on, tmp_path, monkeypatch):
    d = _dispatch(tmp_path)  # just written: racy
    calls = _count_core(monkeypatch)
    _ok("analyze", str(d), "--format", "json")
    assert not _entries(cache_on, "dispatch")
    _ok("analyze", str(d), "--format", "json")
    assert len(calls) == 2


def test_failed_analyses_are_not_stored(cache_on, tmp_path):
    d = _dispatch(tmp_path)
    wave = sorted(d.glob("se*_sm*_sl*_wv*.json"))[0]
    wave.write_bytes(b"{not json")
    _settle()
    for _ in range(2):
        assert run_cli("analyze", str(d), "--format", "json").exit_code == 3
    assert not _entries(cache_on, "dispatch")


# ------------------------------------------------------------------------------ robustness

@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage-body", "empty", "foreign"])
def test_a_corrupt_entry_is_ignored_and_rebuilt(settled, cache_on, tmp_path, monkeypatch, damage):
    _, d = settled
    calls = _count_core(monkeypatch)
    good = _ok("analyze", str(d), "--format", "json")
    [entry] = _entries(cache_on, "dispatch")
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:])
    elif damage == "garbage-body":  # a valid digest over a body that is not an entry
        body = b"\x00not marshal at all"
        entry.write_bytes(store.MAGIC + store.blake2b(body, digest_size=store.DIGEST_SIZE).digest()
                          + body)
    elif damage == "empty":
        entry.write_bytes(b"")
    else:
        entry.write_bytes(b"GIF89a" + os.urandom(64))
    assert _ok("analyze", str(d), "--format", "json") == good
    assert len(calls) == 2
    assert store.read_entry(str(cache_on), entry.name) is not None  # rebuilt
    assert _ok("analyze", str(d), "--format", "json") == good
    assert len(calls) == 2


def test_size_bound_evicts_least_recently_used(cache_on, tmp_path, monkeypatch):
    dirs = [_dispatch(tmp_path / f"c{i}", seed=i) for i in range(4)]
    _settle()
    _ok("analyze", str(dirs[0]), "--format", "json")
    one = sum(p.stat().st_size for p in _entries(cache_on))
    limit_mb = 2.6 * one / (1 << 20)  # room for two entries (and a half)
    monkeypatch.setenv(store.MAX_MB_ENV, f"{limit_mb:.6f}")
    for d in dirs[1:]:
        time.sleep(0.05)  # distinct mtimes for the LRU order
        _ok("analyze", str(d), "--format", "json")
    sizes = [p.stat().st_size for p in _entries(cache_on)]
    assert sum(sizes) <= store.max_bytes()
    assert len(sizes) < 4
    calls = _count_core(monkeypatch)
    _ok("analyze", str(dirs[-1]), "--format", "json")  # the most recent one survived
    assert calls == []


def test_concurrent_processes_share_one_cache(settled, cache_on, tmp_path):
    _, d = settled
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_on.parent), store.CACHE_ENV: "on"}
    cmd = [sys.executable, "-m", "hotspot", "analyze", str(d), "--format", "json", "--topk", "0"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              cwd=tmp_path) for _ in range(6)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    assert len({o for o, _ in outs}) == 1
    assert not list(cache_on.glob("*.tmp"))
    for e in _entries(cache_on):
        assert store.read_entry(str(cache_on), e.name) is not None
    env_off = {**env, store.CACHE_ENV: "off"}
    off = subprocess.run(cmd, capture_output=True, env=env_off, cwd=tmp_path, check=True)
    assert off.stdout == outs[0][0]


def test_no_cache_flag_and_env_write_nothing(settled, cache_on, tmp_path, monkeypatch):
    _, d = settled
    _ok("analyze", str(d), "--format", "json", "--no-cache")
    _ok("--no-cache", "plan", str(d), "--format", "json")
    assert not _entries(cache_on)
    monkeypatch.setenv(store.CACHE_ENV, "off")
    _ok("analyze", str(d), "--format", "json")
    assert not _entries(cache_on)


@pytest.mark.parametrize("unsafe", ["group-writable", "symlink", "file"])
def test_an_unsafe_cache_folder_is_not_used(settled, cache_on, tmp_path, unsafe):
    _, d = settled
    cache_on.parent.mkdir(parents=True)
    if unsafe == "group-writable":
        cache_on.mkdir(mode=0o777)
        os.chmod(cache_on, 0o777)
    elif unsafe == "symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        cache_on.symlink_to(tmp_path / "elsewhere")
    else:
        cache_on.write_text("not a folder")
    _ok("analyze", str(d), "--format", "json")
    info = orjson.loads(_ok("cache", "info", "--format", "json"))["data"]
    assert info["usable"] is False and info["problem"]
    if unsafe != "file":
        assert not list(cache_on.iterdir())


# ------------------------------------------------------------------------------ cache command

def test_cache_info_and_clear(settled, cache_on, tmp_path):
    _, d = settled
    empty = orjson.loads(_ok("cache", "info", "--format", "json"))["data"]
    assert empty["entries"] == 0 and empty["enabled"] and empty["path"] == str(cache_on)
    _ok("report", str(d), "-o", "-")
    files = _entries(cache_on)
    info = orjson.loads(_ok("cache", "info", "--format", "json"))["data"]
    assert info["entries"] == len(files) > 0
    assert info["bytes"] == sum(p.stat().st_size for p in files)
    assert {k["kind"]: k["entries"] for k in info["kinds"]}["dispatch"] == 1
    foreign = cache_on / "README.mine"
    foreign.write_text("mine")
    cleared = orjson.loads(_ok("cache", "clear", "--format", "json"))["data"]
    assert cleared["removed"] == len(files) and cleared["freed_bytes"] == info["bytes"]
    assert not _entries(cache_on) and foreign.read_text() == "mine"
    text = _ok("cache", "info")
    assert str(cache_on) in text and "entries    0" in text


def test_cache_info_says_when_it_is_off(cache_on, monkeypatch):
    monkeypatch.setenv(store.CACHE_ENV, "off")
    info = orjson.loads(_ok("cache", "info", "--format", "json"))["data"]
    assert info["enabled"] is False and info["disabled_by"] == "HOTSPOT_CACHE=off"
    info = orjson.loads(_ok("--no-cache", "cache", "info", "--format", "json"))["data"]
    assert info["disabled_by"] in ("--no-cache", "HOTSPOT_CACHE=off")


# ------------------------------------------------------------------------------ launcher replay

def _launch(args: list[str], cache: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "XDG_CACHE_HOME": str(cache.parent), store.CACHE_ENV: "on", **env}
    return subprocess.run([sys.executable, "-m", "hotspot", *args], capture_output=True, env=full,
                          cwd=cwd, timeout=120)


def test_launcher_replays_stdout_stderr_and_exit_code(settled, cache_on, tmp_path):
    _, d = settled
    args = ["analyze", str(d), "--format", "text"]
    first = _launch(args, cache_on, tmp_path)
    assert first.returncode == 0, first.stderr
    assert _entries(cache_on, "out")
    again = _launch(args, cache_on, tmp_path)
    assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, first.stderr)
    off = _launch(args, cache_on, tmp_path, **{store.CACHE_ENV: "off"})
    assert (off.stdout, off.stderr) == (first.stdout, first.stderr)


def test_a_replay_imports_only_the_cache(settled, cache_on, tmp_path):
    """A replay is answered before the command line is built: none of typer, orjson, typing or
    hotspot's analysis is imported (each costs more than the replay itself; docs/benchmark.md)."""
    _, d = settled
    args = ["analyze", str(d), "--format", "json"]
    assert _launch(args, cache_on, tmp_path).returncode == 0
    assert _entries(cache_on, "out")
    probe = ("import runpy, sys; sys.argv = ['hotspot', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('hotspot', run_name='__main__')\n"
             "except SystemExit as e:\n    code = e.code\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('typer', 'click', 'orjson', 'typing', 'hotspot')), file=sys.stderr)\n")
    full = {**os.environ, "XDG_CACHE_HOME": str(cache_on.parent), store.CACHE_ENV: "on"}
    run = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, env=full,
                         cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    loaded = run.stderr.decode().strip().splitlines()[-1]
    assert "'hotspot.cache.output'" in loaded  # the probe saw the launcher run
    for heavy in ("'typer", "'click", "'orjson", "'typing'", "'hotspot.att", "'hotspot.cli'"):
        assert heavy not in loaded, loaded


def test_launcher_replays_warnings_on_stderr(corpus, cache_on, tmp_path):
    d = corpus_path("att", "gfx950", "vec_add")
    args = ["analyze", str(d), "--format", "text"]
    first = _launch(args, cache_on, tmp_path)
    again = _launch(args, cache_on, tmp_path)
    assert first.returncode == 0 and _entries(cache_on, "out")
    assert b"warning: " in first.stderr
    assert (again.stdout, again.stderr) == (first.stdout, first.stderr)


def test_launcher_output_follows_the_inputs_and_the_environment(settled, cache_on, tmp_path):
    _, d = settled
    args = ["analyze", str(d), "--format", "text"]
    wide = _launch(args, cache_on, tmp_path, COLUMNS="160")
    narrow = _launch(args, cache_on, tmp_path, COLUMNS="80")
    assert wide.stdout != narrow.stdout
    assert _launch(args, cache_on, tmp_path, COLUMNS="80").stdout == narrow.stdout
    _rewrite_wave(d)
    changed = _launch(args, cache_on, tmp_path, COLUMNS="80")
    off = _launch(args, cache_on, tmp_path, COLUMNS="80", **{store.CACHE_ENV: "off"})
    assert changed.stdout == off.stdout != narrow.stdout


def test_report_to_a_file_is_replayed_where_the_command_would_write(settled, cache_on, tmp_path):
    _, d = settled
    out = tmp_path / "r.html"
    args = ["report", str(d), "-o", str(out), "--force"]
    first = _launch(args, cache_on, tmp_path)
    assert first.returncode == 0, first.stderr
    page = out.read_bytes()
    [entry] = _entries(cache_on, "out")
    assert _entries(cache_on, "dispatch")  # the report shared the analysis too
    out.unlink()
    again = _launch(args, cache_on, tmp_path)  # replayed: the file is written again
    assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, first.stderr)
    assert out.read_bytes() == page
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    # without --force an existing file is the command's to refuse: no replay, exit 3
    plain = _launch(["report", str(d), "-o", str(out)], cache_on, tmp_path)
    assert plain.returncode == 3 and b"already exists" in plain.stderr and out.read_bytes() == page
    # a symlink at the target is never written through by a replay
    out.unlink()
    (tmp_path / "elsewhere.html").write_text("mine")
    out.symlink_to(tmp_path / "elsewhere.html")
    _launch(args, cache_on, tmp_path)
    assert (tmp_path / "elsewhere.html").read_text() == "mine"
    assert entry.exists()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_commands_with_other_effects_are_never_replayed(settled, cache_on, tmp_path):
    _, d = settled
    for args in (["skill", "path"], ["cache", "info"], ["analyze", str(d), "--bogus"],
                 ["skill", "install", "--dest", str(tmp_path / "sk")]):
        for _ in range(2):
            _launch(args, cache_on, tmp_path)
    assert not _entries(cache_on, "out")
    page = [_launch(["report", str(d), "-o", "-"], cache_on, tmp_path) for _ in range(2)]
    assert page[0].returncode == 0 and page[0].stdout.startswith(b"<!DOCTYPE html>")
    assert len(_entries(cache_on, "out")) == 1 and page[1].stdout == page[0].stdout


def test_help_pages_from_the_snapshot_bypass_the_cache(cache_on, tmp_path):
    for args in (["--help"], ["analyze", "-h"], []):  # hotspot/clihelp prints them: nothing stored
        for _ in range(2):
            run = _launch(args, cache_on, tmp_path)
            assert b"Usage: hotspot" in run.stdout + run.stderr
    assert not _entries(cache_on, "out")


def test_help_is_replayed_and_follows_the_code(cache_on, tmp_path):
    args = ["analyze", "--topk", "3", "--help"]  # a help typer prints (options before it)
    first = _launch(args, cache_on, tmp_path)
    assert first.returncode == 0 and b"--detail" in first.stdout
    assert _entries(cache_on, "out")
    assert _launch(args, cache_on, tmp_path).stdout == first.stdout
    body = store.read_entry(str(cache_on), _entries(cache_on, "out")[0].name)
    import marshal

    code = marshal.loads(body)[4]
    assert str(PROJECT_ROOT / "hotspot" / "cli.py") in code  # an edit of cli.py invalidates it


def test_launcher_with_a_closed_pipe_exits_cleanly(settled, cache_on, tmp_path):
    _, d = settled
    args = [sys.executable, "-m", "hotspot", "analyze", str(d), "--format", "json", "--topk", "0"]
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_on.parent), store.CACHE_ENV: "on"}
    subprocess.run(args, capture_output=True, env=env, check=True)
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    p.stdout.read(10)
    p.stdout.close()
    assert p.wait(timeout=60) == 0
    assert b"Traceback" not in p.stderr.read()


# ------------------------------------------------------------------------------ units

def test_signatures_see_size_mtime_and_replacement(tmp_path):
    f = tmp_path / "a.json"
    f.write_text("12345")
    paths = [str(f), str(tmp_path / "absent")]
    sigs = deps.signatures(paths)
    assert sigs[1] is None and deps.unchanged(paths, sigs)
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 1))
    assert not deps.unchanged(paths, sigs)
    sigs = deps.signatures(paths)
    (tmp_path / "absent").write_text("")
    assert not deps.unchanged(paths, sigs)


def test_listed_records_only_matching_names(tmp_path):
    (tmp_path / "x_agent_info.csv").write_text("")
    (tmp_path / "other.txt").write_text("")
    with deps.recording() as read:
        names = deps.listed(str(tmp_path), ("*agent_INFO.csv",), deps.FILES)
    assert names == ["x_agent_info.csv"]
    [(folder, pattern, mode, digest)] = [i for i in read if isinstance(i, tuple)]
    assert str(tmp_path) not in read  # the folder's mtime is not a dependency
    (tmp_path / "more.txt").write_text("")
    assert deps.listings_unchanged([(folder, pattern, mode, digest)])
    (tmp_path / "y_agent_info.csv").write_text("")
    assert not deps.listings_unchanged([(folder, pattern, mode, digest)])


def test_entry_names_do_not_depend_on_string_identity():
    a = ["analyze", "".join(["/tmp/", "x"]), "--format"]
    b = ["analyze", "/tmp/x", "--format"]
    assert store.name_of("out", store.entry_key("out", (1, a))) == \
        store.name_of("out", store.entry_key("out", (1, b)))


@pytest.mark.parametrize("name,glob", [
    ("x_agent_info.csv", "*agent_info.csv"), ("agent_info.csv", "*agent_info.csv"),
    ("run_code_object_id_3.out", "*_code_object_id_*.out"), ("a_code_object_id_.out", "*_code_object_id_*.out"),
    ("ui_output_agent_1_dispatch_2", "ui_output_agent_*_dispatch_*"), ("abc", "*"), ("", "*"),
    ("results.db", "results.db"), ("aXbXc", "*x*x*"), ("ab", "a*b*"), ("abab", "*ab*ab"),
    ("aba", "ab*ba"), ("agent_info.csv.bak", "*agent_info.csv"), ("x.out", "*_code_object_id_*.out"),
])
def test_glob_match_is_fnmatch_for_star_globs(name, glob):
    import fnmatch

    assert deps.glob_match(name, glob) == fnmatch.fnmatchcase(name, glob)


@settings(max_examples=300, deadline=None)
@given(st.text("ab*_.", max_size=8), st.text("ab_.", max_size=10))
def test_glob_match_equals_fnmatch_on_generated_globs(glob, name):
    import fnmatch

    assert deps.glob_match(name, glob) == fnmatch.fnmatchcase(name, glob)


def test_code_files_follow_the_loaded_modules_and_code_signatures_stat_once_per_command(tmp_path,
                                                                                         monkeypatch):
    """code_files() and the import folders are remembered for one set of loaded modules (a diff
    stores six entries with the same modules): a module loaded since is listed, one gone is not.
    Code signatures are read once per command: a code file edited mid-command keeps the signature
    the command started with, and the next command stats it afresh."""
    import types

    import sysconfig

    paths = sysconfig.get_paths()

    def under(f: str, *folders: str) -> bool:
        return any(os.path.commonpath([f, os.path.realpath(d)]) == os.path.realpath(d) or
                   os.path.commonpath([f, os.path.abspath(d)]) == os.path.abspath(d) for d in folders)

    def fresh_code_files() -> list[str]:  # the definition, computed without the memo
        stdlib = (paths["stdlib"], paths["platstdlib"], os.path.dirname(os.__file__))
        return sorted({f for m in list(sys.modules.values())
                       if isinstance(f := getattr(m, "__file__", None), str)
                       and (not under(f := os.path.abspath(f), *stdlib)
                            or under(f, paths["purelib"], paths["platlib"]))})

    assert deps.code_files() == fresh_code_files()
    src = tmp_path / "hotspot_probe_mod.py"
    src.write_text("X = 1\n")
    pkg = tmp_path / "probe_pkg"
    mod = types.ModuleType("hotspot_probe_mod")
    mod.__file__ = str(src)
    package = types.ModuleType("probe_pkg")
    package.__path__ = [str(pkg)]
    monkeypatch.setitem(sys.modules, "hotspot_probe_mod", mod)
    monkeypatch.setitem(sys.modules, "probe_pkg", package)
    assert str(src) in deps.code_files() and deps.code_files() == fresh_code_files()
    assert str(pkg) in deps._import_dirs()
    monkeypatch.delitem(sys.modules, "hotspot_probe_mod")
    monkeypatch.delitem(sys.modules, "probe_pkg")
    assert str(src) not in deps.code_files() and str(pkg) not in deps._import_dirs()

    before = deps.signature(str(src))
    with deps.one_command():
        assert deps.code_signatures([str(src)]) == [before]
        os.utime(src, ns=(1, 1))  # edited while the command runs
        assert deps.code_signatures([str(src)]) == [before]
    assert deps.code_signatures([str(src)]) == [deps.signature(str(src))] != [before]
