"""scripts/bench.py and benchkit: process measurement, cached inputs, targets, and a quick end-to-end run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

# The benchmark support lives beside the script that uses it (scripts/benchkit), not in the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from benchkit.inputs import (
    META_NAME,
    TARGET_WAVE_BYTES,
    WAVE_FILE_RE,
    bench_program,
    cached_dispatch,
    dir_stats,
    spec_for_mb,
    spec_for_waves,
    stale_partials,
)
from benchkit.measure import Run, Spread, run_once, summarize
from benchkit.targets import Case, evaluate, relative_cost

from hotspot.synth import DispatchSpec, make_dispatch

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20
PY = sys.executable


# --- measuring one process ---------------------------------------------------------------------------

def test_summarize_median_range_and_first_failure() -> None:
    runs = [Run(300, 30, 5, 7, 0, ""), Run(100, 10, 9, 2, 0, ""), Run(200, 20, 1, 1, 4, "boom\n")]
    s = summarize(runs)
    assert (s.median_wall_ns, s.min_wall_ns, s.max_wall_ns, s.median_cpu_ns) == (200, 100, 300, 20)
    assert (s.peak_rss_bytes, s.tree_rss_bytes, s.runs, s.wall_ns) == (9, 7, 3, (300, 100, 200))
    assert s.failed == "exit 4: boom"
    assert summarize(runs[:2]).failed is None
    with pytest.raises(ValueError):
        summarize([])


def test_run_once_sees_memory_time_and_exit_code() -> None:
    r = run_once([PY, "-c", "import time; b = bytearray(80 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
                  "time.sleep(0.3)"])
    assert r.exit_code == 0 and r.stderr_tail == ""
    assert r.wall_ns >= 300_000_000
    assert r.peak_rss_bytes >= 80 * MIB
    if Path("/proc").is_dir():
        assert r.tree_rss_bytes >= 80 * MIB   # sampled while the child sleeps holding the buffer
    bad = run_once([PY, "-c", "import sys; sys.stderr.write('no such dir'); sys.exit(3)"])
    assert bad.exit_code == 3 and "no such dir" in bad.stderr_tail


def _run_once_from_a_small_process(argv: list[str]) -> Run:
    """run_once inside a fresh interpreter, as scripts/bench.py runs it. Linux reports a child's
    peak RSS as at least its parent's when it was started (exec keeps the old address space's
    high-water mark), so from inside a pytest process grown past 120 MiB every child would look
    that large."""
    code = ("import dataclasses, json, sys\n"
            f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1] / 'scripts')!r})\n"
            "from benchkit.measure import run_once\n"
            "print(json.dumps(dataclasses.asdict(run_once(json.loads(sys.argv[1])))))\n")
    out = subprocess.run([PY, "-c", code, orjson.dumps(argv).decode()], capture_output=True, text=True,
                         check=True).stdout
    return Run(**orjson.loads(out))


def test_run_once_counts_descendants() -> None:
    # two grandchildren hold 60 MiB each at the same time and one burns CPU: the largest single process
    # stays below 2 x 60 MiB, the sampled tree sum does not, and CPU time includes the grandchildren
    child = ("import subprocess, sys\n"
             "code = 'import time; b = bytearray(60 * 2**20); b[::4096] = b\"x\" * len(b[::4096]); "
             "t = time.process_time()\\nwhile time.process_time() - t < 0.3: pass\\ntime.sleep(0.3)'\n"
             "ps = [subprocess.Popen([sys.executable, '-c', code]) for _ in range(2)]\n"
             "sys.exit(max(p.wait() for p in ps))\n")
    r = _run_once_from_a_small_process([PY, "-c", child])
    assert r.exit_code == 0
    assert 60 * MIB <= r.peak_rss_bytes < 120 * MIB
    assert r.cpu_ns >= 500_000_000
    if Path("/proc").is_dir():
        assert r.tree_rss_bytes >= 120 * MIB


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see unreaped processes")
def test_run_once_counts_cpu_of_processes_it_never_reaps(tmp_path: Path) -> None:
    # a forkserver pool's workers are its server's children, so the command's rusage misses them:
    # here the command starts a CPU-burning child and exits without waiting for it. The child says
    # when its CPU work is done (a marker file) and stays alive a moment, so the sampler sees its
    # whole CPU time however loaded the machine is.
    marker = tmp_path / "burned"
    burner = tmp_path / "burner.py"
    burner.write_text("import sys, time\n"
                      "t = time.process_time()\n"
                      "while time.process_time() - t < 0.4:\n"
                      "    pass\n"
                      "open(sys.argv[1], 'w').close()\n"
                      "time.sleep(3)\n")
    parent = tmp_path / "parent.py"
    parent.write_text("import os, subprocess, sys, time\n"
                      "subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]])\n"
                      "while not os.path.exists(sys.argv[2]):\n"
                      "    time.sleep(0.02)\n"
                      "time.sleep(0.3)\n")
    r = run_once([PY, str(parent), str(burner), str(marker)])
    assert r.exit_code == 0
    assert r.cpu_ns >= 300_000_000


# --- inputs --------------------------------------------------------------------------------------------

def test_bench_program_lands_near_the_realistic_wave_size() -> None:
    mix, per_wave = bench_program()
    assert abs(per_wave - TARGET_WAVE_BYTES) / TARGET_WAVE_BYTES < 0.15
    spec = spec_for_mb(10, mix, per_wave)
    assert spec.waves == -(-10_000_000 // per_wave)
    assert spec_for_waves(2000, mix).waves == 2000


def test_cache_generates_once_and_reports_leftovers(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    spec = DispatchSpec(waves=6)
    d1, fresh1 = cached_dispatch(cache, spec)
    d2, fresh2 = cached_dispatch(cache, spec)
    assert (fresh1, fresh2) == (True, False) and d1 == d2
    meta = orjson.loads((d1.parent / META_NAME).read_bytes())
    waves = [p for p in d1.iterdir() if WAVE_FILE_RE.match(p.name)]
    assert meta["waves"] == len(waves) == 6
    assert meta["wave_bytes"] == sum(p.stat().st_size for p in waves)
    assert not [p for p in cache.iterdir() if ".partial-" in p.name]
    other, _ = cached_dispatch(cache, DispatchSpec(waves=7))
    assert other.parent != d1.parent
    (cache / "w1_t1_s1_abc.partial-99999999").mkdir()
    assert [p.name for p in stale_partials(cache)] == ["w1_t1_s1_abc.partial-99999999"]
    assert (cache / "w1_t1_s1_abc.partial-99999999").is_dir()   # reported, never removed


def test_dir_stats_counts_wave_files_and_bytes(tmp_path: Path) -> None:
    d = make_dispatch(tmp_path, DispatchSpec(waves=5), seed=2)
    st = dir_stats(tmp_path)   # a folder holding a dispatch dir: walked recursively, no code.json of its own
    names = [p for p in d.iterdir() if p.is_file()]
    assert st.waves == 5 and st.files == len(names) and st.code_json is None
    assert st.wave_bytes == sum(p.stat().st_size for p in names if p.name.startswith("se"))
    assert dir_stats(d).code_json == d / "code.json"


# --- targets -------------------------------------------------------------------------------------------

def _spread(wall_s: float, cpu_s: float | None = None, rss_mib: float = 50, tree_mib: float = 0) -> Spread:
    w = round(wall_s * 1e9)
    return Spread(1, w, w, w, round((cpu_s if cpu_s is not None else wall_s) * 1e9), round(rss_mib * MIB),
                  round(tree_mib * MIB), (w,), None)


def _case(label: str, kind: str, mb: float | None, wave_bytes: int, h: Spread, base: Spread | None = None,
          jobs: int | None = None) -> Case:
    return Case(label, kind, Path("/x"), mb, 10, 12, wave_bytes, jobs, h, base, None)


def test_targets_from_hand_made_numbers() -> None:
    cases = [
        _case("vec_add", "dir", None, 400_000, _spread(0.10), base=_spread(0.08)),       # 1.25x: pass
        _case("big_dir", "dir", None, 9_000_000, _spread(3.0), base=_spread(0.1)),       # not small: ignored
        _case("2,000 waves", "waves", None, 35_000_000, _spread(0.45), jobs=1),
        _case("10 MB", "size", 10, 10_000_000, _spread(1.0)),
        _case("1000 MB", "size", 1000, 1_000_000_000, _spread(120.0, cpu_s=5.0, rss_mib=200, tree_mib=310), jobs=2),
    ]
    t = {x.name: x for x in evaluate(cases, _spread(0.2))}
    assert t["wave_case_time"].verdict == "PASS" and t["wave_case_time"].value == 450_000_000
    assert t["throughput_per_core"].verdict == "PASS" and t["throughput_per_core"].value == pytest.approx(200e6)
    assert t["big_time"].verdict == "FAIL"                       # 120 s > 10 s
    assert t["big_rss"].verdict == "FAIL" and t["big_rss"].value == 310 * MIB   # the tree sum, not the 200 MiB process
    assert t["linearity"].value == pytest.approx(1.2) and t["linearity"].verdict == "PASS"   # (120/1000)/(1/10)
    assert t["help_time"].verdict == "FAIL"                      # 0.2 s > 0.15 s
    assert t["small_dir_ratio:vec_add"].value == pytest.approx(1.25) and t["small_dir_ratio:vec_add"].verdict == "PASS"
    assert "small_dir_ratio:big_dir" not in t
    assert relative_cost(cases[4], cases[3]) == pytest.approx(1.2)


def test_targets_skip_without_their_cases() -> None:
    t = {x.name: x for x in evaluate([_case("1 MB", "size", 1, 1_000_000, _spread(0.5))], None)}
    for name in ("wave_case_time", "big_time", "big_rss", "linearity", "help_time", "small_dir_ratio"):
        assert t[name].verdict == "SKIP" and t[name].value is None
    assert t["throughput_per_core"].value == pytest.approx(2e6)   # 1 MB in 0.5 s CPU


# --- the script, end to end ----------------------------------------------------------------------------

def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, str(ROOT / "scripts" / "bench.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


@pytest.mark.slow
def test_script_runs_and_reports_sane_numbers(tmp_path: Path) -> None:
    given = make_dispatch(tmp_path / "given", DispatchSpec(waves=8), seed=3)
    cache = tmp_path / "cache"
    common = [str(given), "--sizes", "1", "--runs", "1", "--wave-case", "0", "--cache", str(cache),
              "--vs", f"{PY} -c pass {{dir}}"]
    p = _bench(*common, "--json")
    assert p.returncode == 0, p.stderr
    doc = orjson.loads(p.stdout)
    assert doc["schema_version"] == 1 and doc["settings"]["runs"] == 1
    assert doc["help"]["median_wall_ns"] > 0
    by = {c["label"]: c for c in doc["cases"]}
    assert set(by) == {given.name, "1 MB"}
    for label, c in by.items():
        d = Path(c["path"])
        waves = [f for f in d.iterdir() if WAVE_FILE_RE.match(f.name)]
        assert c["waves"] == len(waves) and c["wave_bytes"] == sum(f.stat().st_size for f in waves)
        h = c["hotspot"]
        assert h["failed"] is None and h["wall_ns"] == [h["median_wall_ns"]]
        assert h["peak_rss_bytes"] > 0 and h["median_cpu_ns"] > 0
        assert c["throughput_bytes_per_s"] == pytest.approx(c["wave_bytes"] / (h["median_wall_ns"] / 1e9))
        assert c["ratio_vs_other"] == pytest.approx(h["median_wall_ns"] / c["other"]["median_wall_ns"])
    assert by[given.name]["waves"] == 8
    assert by[given.name]["ratio_vs_baseline"] == pytest.approx(
        by[given.name]["hotspot"]["median_wall_ns"] / by[given.name]["baseline"]["median_wall_ns"])
    assert by["1 MB"]["baseline"] is None and by["1 MB"]["relative_cost_per_mb"] == pytest.approx(1.0)
    assert 0.85e6 < by["1 MB"]["wave_bytes"] < 1.2e6
    verdicts = {t["name"]: t["verdict"] for t in doc["targets"]}
    assert verdicts[f"small_dir_ratio:{given.name}"] in ("PASS", "FAIL")
    # issue 18: the given dir's chain (the generated size cases have none)
    [chain] = doc["chains"]
    assert chain["label"] == given.name
    assert set(chain["steps"]) == {"analyze", "analyze --plan", "report", "diff"}
    assert set(chain["repeats"]) == {"analyze", "analyze --plan", "report", "diff", "plan", "report -o -"}
    for spread in [chain["fresh"], chain["baseline"], chain["sequence"], *chain["repeats"].values()]:
        assert spread["failed"] is None and spread["median_wall_ns"] > 0
    steps_total = sum(v["median_wall_ns"] for v in chain["steps"].values())
    assert chain["sequence"]["median_wall_ns"] == steps_total  # one run: the sum of its steps
    assert chain["sequence_vs_fresh"] == pytest.approx(
        chain["sequence"]["median_wall_ns"] / chain["fresh"]["median_wall_ns"])
    assert chain["repeat_vs_baseline"]["analyze"] == pytest.approx(
        chain["repeats"]["analyze"]["median_wall_ns"] / chain["baseline"]["median_wall_ns"])
    # a repeat is answered by the cache: well under a fresh analysis of the same dir
    assert chain["repeats"]["analyze"]["median_wall_ns"] < chain["fresh"]["median_wall_ns"]
    for name in (f"fresh_vs_baseline:{given.name}", f"repeat_vs_baseline:{given.name}",
                 f"sequence_vs_fresh:{given.name}", "help_18", "analyze_help"):
        assert verdicts[name] in ("PASS", "FAIL")
    assert verdicts["big_wall_2_cores"] == "SKIP"
    assert set(doc["help_runs"]) == {"--help", "--help (cold)", "analyze --help", "analyze --help (cold)"}
    assert not list((Path.home() / ".cache" / "hotspot").glob("out-*bench*"))
    assert verdicts["throughput_per_core"] in ("PASS", "FAIL") and verdicts["big_time"] == "SKIP"
    assert "generated" in p.stderr

    # rerun in text mode: the generated dir comes from the cache and the tables are printed
    p2 = _bench(*common)
    assert p2.returncode == 0, p2.stderr
    assert "cached" in p2.stderr and "generated" not in p2.stderr
    out = p2.stdout
    for header in ("case", "waves", "files", "MB", "median s", "spread s", "MB/s", "peak RSS MiB",
                   "cost/MB vs 1 MB", "json.load s", "hotspot/other", "targets (issue 9, point 4):",
                   "targets (issue 18):", "repeat analyze", "sequence"):
        assert header in out
    cells = next(line for line in out.splitlines() if line.startswith("1 MB ")).split()
    # "1 MB" takes two cells: waves, files, MB, median s, spread s, MB/s, CPU s, peak RSS MiB follow
    assert int(cells[2]) == by["1 MB"]["waves"] and float(cells[4]) == pytest.approx(1.0, abs=0.2)
    assert float(cells[7]) > 0 and float(cells[9]) > 0


def test_script_rejects_bad_arguments(tmp_path: Path) -> None:
    p = _bench("--sizes", "1,x", "--cache", str(tmp_path))
    assert p.returncode == 2 and "--sizes" in p.stderr
    p = _bench(str(tmp_path / "missing"), "--sizes", "", "--cache", str(tmp_path))
    assert p.returncode == 2 and "not a directory" in p.stderr
    p = _bench("--vs", "echo hi", "--sizes", "1", "--cache", str(tmp_path))
    assert p.returncode == 2 and "{dir}" in p.stderr
    assert list(tmp_path.iterdir()) == []     # nothing generated before the arguments are checked


def test_predecessor_stand_in_reads_code_json_only(tmp_path: Path) -> None:
    """The baseline sums code.json's Stall column like the predecessor (checked against the file)."""
    d = make_dispatch(tmp_path / "p", DispatchSpec(waves=4), seed=5)
    rows = orjson.loads((d / "code.json").read_bytes())["code"]
    total = sum(r[8] for r in rows)
    p = subprocess.run([PY, str(ROOT / "scripts" / "benchkit" / "predecessor.py"), str(d), "--topk", "3"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert f"total stall: {total}" in p.stdout and "top 3 source lines:" in p.stdout
    mix = next(line for line in p.stdout.splitlines() if line.startswith("instruction mix: "))
    assert sum(int(part.rsplit(" ", 1)[1]) for part in mix.split(": ", 1)[1].split(", ")) == len(rows)
    assert subprocess.run([PY, str(ROOT / "scripts" / "benchkit" / "predecessor.py")],
                          capture_output=True, timeout=60).returncode == 2


def test_issue18_targets_from_hand_made_numbers() -> None:
    from benchkit import targets18
    from benchkit.sequence import Chain

    def sp(ms: float) -> Spread:
        ns = int(ms * 1e6)
        return Spread(1, ns, ns, ns, ns, 1, 1, (ns,), None)

    def case(label: str, kind: str, wave_bytes: int) -> Case:
        return Case(label, kind, Path("/x"), None, 10, 12, wave_bytes, None, sp(100), None, None)

    small = case("vec_add", "dir", 400_000)
    waves = case("2,000 waves", "waves", 33_000_000)
    ch_small = Chain("vec_add", fresh=sp(110), baseline=sp(60), sequence=sp(170),
                     steps={"analyze": sp(110)}, repeats={"analyze": sp(29), "report": sp(31)})
    ch_waves = Chain("2,000 waves", fresh=sp(300), baseline=sp(100), sequence=sp(500),
                     steps={"analyze": sp(300)}, repeats={"analyze": sp(40)})
    helps = {"--help": sp(120), "--help (cold)": sp(90), "analyze --help": sp(40),
             "analyze --help (cold)": sp(85)}
    got = {t.name: t for t in targets18.evaluate([(small, ch_small), (waves, ch_waves)], [], helps)}
    assert got["fresh_vs_baseline:vec_add"].verdict == "PASS"          # 1.83x <= 2.0
    assert got["fresh_vs_baseline:2,000 waves"].verdict == "FAIL"      # 3.0x > 2.5
    assert got["repeat_vs_baseline:vec_add"].verdict == "FAIL"         # slowest repeat 31/60 > 0.5
    assert "report" in got["repeat_vs_baseline:vec_add"].measured
    assert got["repeat_vs_baseline:2,000 waves"].verdict == "PASS"     # 0.4x
    assert got["sequence_vs_fresh:vec_add"].verdict == "PASS"          # 1.55x
    assert got["sequence_vs_fresh:2,000 waves"].verdict == "FAIL"      # 1.67x
    # judged cache off (the first call); the warm median is shown beside
    assert got["help_18"].verdict == "PASS" and "0.090 s" in got["help_18"].measured
    assert "0.120 s" in got["help_18"].measured
    assert got["analyze_help"].verdict == "FAIL"                       # 85 ms cold > 80, 40 warm
    assert got["big_wall_2_cores"].verdict == "SKIP"


def test_fresh_runs_have_the_cache_off_and_an_empty_folder_of_their_own(tmp_path: Path) -> None:
    from benchkit.sequence import cold_env, written

    folder = tmp_path / "cold"
    env = cold_env(folder)
    assert env == {"HOTSPOT_CACHE": "off", "XDG_CACHE_HOME": str(folder)}
    assert written(folder) == []                         # absent: nothing written
    d = make_dispatch(tmp_path / "d", DispatchSpec(waves=2), seed=1)
    r = run_once([PY, "-m", "hotspot", "analyze", str(d), "--format", "json"], sample_tree=False, env=env)
    assert r.exit_code == 0, r.stderr_tail
    assert written(folder) == []                         # off means off
    (folder / "hotspot").mkdir(parents=True)
    (folder / "hotspot" / "x.entry").write_bytes(b"")
    assert written(folder) == [str(folder / "hotspot" / "x.entry")]


def test_every_round_of_a_chain_starts_with_a_fresh_analysis(tmp_path: Path, monkeypatch) -> None:
    """Round after round, the fresh analyze runs with the fresh environment (cache off, its own
    empty folder) and each sequence from an empty cache folder of its own."""
    import os

    from benchkit import sequence

    calls: list[tuple[list[str], dict[str, str]]] = []

    def fake_run(argv, sample_tree=True, env=None) -> Run:  # noqa: ANN001
        calls.append((list(argv), dict(env or {})))
        return Run(1, 1, 1, 1, 0, "")

    monkeypatch.setattr(sequence, "run_once", fake_run)
    d = tmp_path / "d"
    d.mkdir()
    os.utime(d, (0, 0))  # settled: no wait for the racy window
    fresh_env = sequence.cold_env(tmp_path / "cold")
    sequence.measure_chain("x", d, 3, lambda _: None, fresh_env)
    warmup = len(sequence.repeat_commands(d, tmp_path / "r.html"))
    per_round = 2 + len(sequence.sequence_commands(d, tmp_path / "r.html")) + warmup
    rounds = [calls[warmup + i * per_round:warmup + (i + 1) * per_round] for i in range(3)]
    seq_folders = set()
    for r in rounds:
        (fresh_argv, fresh), (base_argv, base) = r[0], r[1]
        assert fresh_argv[-4:] == ["analyze", str(d), "--format", "json"] and fresh == fresh_env
        assert base_argv[1] == sequence.PREDECESSOR and base == {}
        steps = r[2:2 + len(sequence.sequence_commands(d, tmp_path / "r.html"))]
        assert len({env["XDG_CACHE_HOME"] for _, env in steps}) == 1
        seq_folders.add(steps[0][1]["XDG_CACHE_HOME"])
    assert len(seq_folders) == 3  # a new empty folder per sequence


# --- issue 37: bench.py --programs ---------------------------------------------------------------

def test_mcp_latency_verdicts_from_hand_made_numbers() -> None:
    from benchkit.mcplatency import Fresh, Latency, Start, ToolTiming, evaluate

    start = Start(baseline_s=[1.0, 2.0, 1.5], hotspot_s=[1.1, 2.5, 1.7],
                  baseline_cpu_s=[0.5, 0.6, 0.5], hotspot_cpu_s=[0.6, 0.7, 0.9])
    assert start.over_s == pytest.approx(0.2)        # the median of the paired differences .1 .5 .2
    assert start.over_cpu_s == pytest.approx(0.1)    # .1 .1 .4
    tools = [ToolTiming("plan", {}, first_s=[0.4, 0.45], repeat_s=[0.003, 0.004, 0.02]),
             ToolTiming("report", {}, first_s=[0.7], repeat_s=[0.011]),
             ToolTiming("doctor", {}, first_s=[2.0], repeat_s=[0.005], is_error=True, error="tool-missing")]
    fresh = Fresh("cap", 2056, 40_000_000, server_s=[0.3, 0.2, 0.5], predecessor_s=[0.1, 0.1, 0.1],
                  server_cpu_s=[0.25, 0.3, 0.35], predecessor_cpu_s=[0.05, 0.05, 0.0])
    assert fresh.ratio == pytest.approx(3.0) and fresh.cpu_ratio == pytest.approx(5.5)  # pairs with 0 CPU left out
    got = {v.name: v.ok for v in evaluate(Latency(start=start, tools=tools, fresh=fresh))}
    assert got["first call: plan"] is True and got["repeat call: plan"] is True   # medians .425 s, 4 ms
    assert got["first call: report"] is False and got["repeat call: report"] is False
    assert "first call: doctor" not in got and got["repeat call: doctor"] is True  # doctor reads no capture
    start_ok = [ok for name, ok in got.items() if name.startswith("MCP start")]
    fresh_ok = [ok for name, ok in got.items() if name.startswith("fresh analyze")]
    assert start_ok == [True] and fresh_ok == [True]
    assert got["  the same in CPU time (server process during the call / predecessor process)"] is False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")
def test_server_cpu_clock_counts_every_thread_and_agrees_with_the_ticks() -> None:
    """The server's CPU is read from its process CPU clock: a thread that burned CPU and ended is
    still counted (a sum over /proc/PID/task/*/schedstat, the live threads, would lose it), and the
    reading agrees with /proc/PID/stat's 10 ms ticks, the same accounting."""
    from benchkit.mcplatency import _clock_cpu, _cpu_of, _tick_cpu

    burn = ("import threading, sys, time\n"
            "def spin():\n"
            "    t = time.thread_time()\n"
            "    while time.thread_time() - t < 0.3: pass\n"
            "th = threading.Thread(target=spin); th.start(); th.join()\n"
            "print('ready', flush=True); sys.stdin.read()\n")
    child = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        clock, ticks = _clock_cpu(child.pid), _tick_cpu(child.pid)
        live = sum(int(t.joinpath("schedstat").read_text().split()[0])
                   for t in Path(f"/proc/{child.pid}/task").iterdir()) / 1e9
    finally:
        child.communicate("")
    assert clock is not None and ticks is not None
    assert clock >= 0.3 + live - 0.001        # the ended thread's 0.3 s, beside what the live threads used
    assert abs(clock - ticks) <= 0.03         # user and system ticks, each within a tick or so
    assert _cpu_of(child.pid) is None         # gone: nothing to read


def test_programs_parts_and_verdicts() -> None:
    from benchkit import programs

    assert programs.parts_of("all") == set(programs.PARTS)
    assert programs.parts_of("scan, fresh") == {"scan", "fresh"}
    for bad in ("", "scan,nope"):
        with pytest.raises(ValueError):
            programs.parts_of(bad)
    p = programs.Programs(synthetic="d", synthetic_wave_bytes=300_000_000, analyze_cpu_s=[1.0, 1.5, 1.2],
                          analyze_wall_s=[2.0, 2.0, 2.0],
                          scan={"wave_bytes": 300_000_000, "read_cpu_s": 0.1, "scan_cpu_s": 0.6,
                                "fold_wave_cpu_s": 0.7, "pass_cpu_s": 1.0})
    assert p.analyze_mb_per_cpu_s == pytest.approx(250.0)   # 300 MB / 1.2 s (the median)
    got = {v.name: (v.ok, v.measured) for v in programs.verdicts(p)}
    assert got["fresh analyze --jobs 1, MB of wave JSON per CPU second"][0] is True
    ok, text = got["native scan alone, MB per CPU second of one core"]
    assert ok is False and text.startswith("500 ")          # 300 MB / 0.6 s < 600


def test_programs_synthetic_is_make_dispatch_at_200_mb() -> None:
    from benchkit import programs

    from hotspot.synth import wave_bytes_estimate

    spec = programs.synthetic_spec()
    per_wave = wave_bytes_estimate(spec, 0)
    assert spec.waves == -(-200_000_000 // per_wave)  # make_dispatch.py --target-mb 200: ceil(MB / bytes per wave)


def test_every_tool_is_measured(tmp_path: Path) -> None:
    from benchkit.mcplatency import tool_calls

    from hotspot.mcp.tool_schemas import SPECS

    calls = tool_calls(ROOT.parent / "shared" / "corpus", tmp_path)
    assert set(calls) == {s.name for s in SPECS}
    assert (tmp_path / "sweep" / "sweep.sbatch").is_file()  # the sweep tools' dry-run sweep


def test_programs_rejects_bad_parts(tmp_path: Path) -> None:
    p = _bench("--programs", "speed", "--cache", str(tmp_path))
    assert p.returncode == 2 and "--programs takes" in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_mcp_latency_measures_a_tool_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK is not installed")
    from benchkit import mcplatency

    lat = mcplatency.measure(ROOT.parent / "shared" / "corpus", None, runs=1, repeats=2, only={"occupancy"})
    assert [t.tool for t in lat.tools] == ["occupancy"] and lat.start is None and lat.fresh is None
    t = lat.tools[0]
    assert len(t.first_s) == 1 and len(t.repeat_s) == 2 and not t.is_error and t.answer_bytes > 0
    assert t.remembered is True  # the repeat was answered from memory


def test_scan_rate_reports_a_failing_fresh_run_as_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    """A fresh `analyze` that fails ends the scan rate with exit 1 and the command named, not a
    traceback (the in-process measurement stands in: the folder is no capture)."""
    from benchkit import scanrate

    monkeypatch.setattr(scanrate, "measure", lambda d: {
        "waves": 1, "wave_bytes": 1e6, "read_cpu_s": 1.0, "scan_cpu_s": 1.0, "fold_wave_cpu_s": 1.0,
        "pass_cpu_s": 1.0})
    assert scanrate.main([str(tmp_path), "--runs", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"scanrate: {sys.executable} -m hotspot analyze {tmp_path} --jobs 1 --no-cache "
                          "--format json: exit ")
    code = int(err.split(": exit ")[1].split(":")[0])
    assert code != 0 and "(next: " in err  # hotspot's own one-line error, as the run printed it
