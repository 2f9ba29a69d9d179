"""Peak memory of hotspot on one huge input file (issue 19): a single code.json of N MB, or a single
wave file of N MB beside a small code.json. Used by `scripts/bench.py --hostile-rss MB` to set and
check the default --max-file-mb: below the cap a command's peak RSS must stay within the budget,
above it the file is refused before it is read.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from benchkit.measure import run_once

MIB = 1 << 20
HEADER = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
SMALL_ROWS = 2000  # code rows beside the huge wave file


def _code_doc(rows: int) -> bytes:
    code = [["; hostile_kernel", 0, 0, "", 1, 0, 0, 0, 0, 0]]
    for i in range(1, rows + 1):
        isa = "s_waitcnt vmcnt(0)" if i % 7 == 0 else f"v_add_f32 v{i % 200}, v{(i + 1) % 200}, v3"
        code.append([isa, 0, i, f"/src/kernels/hostile_{i % 50}.py:{i % 4000 + 1}", 1, 4 * i,
                     1, 4 + i % 9, i % 11, i % 5])
    return orjson.dumps({"code": code, "header": HEADER, "version": "3.0.0"})


def _filenames(name: str, begin: int, end: int) -> bytes:
    return orjson.dumps({"gfxip": 9, "version": "3.0.0",
                         "wave_filenames": {"0": {"0": {"0": {"0": [name, begin, end]}}}}})


def _wave(records: int, rows: int) -> tuple[bytes, int]:
    ins = [[4 * k, 6, k % 3, 4, k % rows + 1] for k in range(records)]
    end = 4 * records + 4
    doc = {"wave": {"begin": 0, "end": end, "cu": 0, "instructions": ins,
                    "timeline": [[2, end]], "waitcnt": []}}
    return orjson.dumps(doc), end


def _sized(make, mb: float, sample: int) -> bytes:  # noqa: ANN001
    """make(n) rescaled once so that its size is within ~1% of `mb` (entries grow with n)."""
    n = max(1, int(mb * MIB / (len(make(sample)) / sample)))
    data = make(n)
    return make(max(1, int(n * mb * MIB / len(data) * 0.995)))


def huge_code_json(folder: Path, mb: float) -> Path:
    """A dispatch dir whose code.json is ~`mb` MB (one small wave file over its first rows)."""
    d = folder / f"ui_output_agent_1_dispatch_{int(mb)}"
    if (d / "code.json").is_file():
        return d
    d.mkdir(parents=True, exist_ok=True)
    (d / "code.json").write_bytes(_sized(_code_doc, mb, 1000))
    data, end = _wave(5000, 1000)
    (d / "se0_sm0_sl0_wv0.json").write_bytes(data)
    (d / "filenames.json").write_bytes(_filenames("se0_sm0_sl0_wv0.json", 0, end))
    return d


def huge_wave_file(folder: Path, mb: float) -> Path:
    """A dispatch dir of a small code.json and one wave file of ~`mb` MB."""
    d = folder / f"ui_output_agent_2_dispatch_{int(mb)}"
    if (d / "se0_sm0_sl0_wv0.json").is_file():
        return d
    d.mkdir(parents=True, exist_ok=True)
    (d / "code.json").write_bytes(_code_doc(SMALL_ROWS))
    data = _sized(lambda n: _wave(n, SMALL_ROWS)[0], mb, 10000)
    end = orjson.loads(data)["wave"]["end"]
    (d / "se0_sm0_sl0_wv0.json").write_bytes(data)
    (d / "filenames.json").write_bytes(_filenames("se0_sm0_sl0_wv0.json", 0, end))
    return d


@dataclass(frozen=True)
class Measurement:
    case: str          # "code.json" or "wave file"
    command: str       # analyze | report | export
    file_mb: float     # size of the huge file
    cap_mb: str        # the --max-file-mb given ("default" when none)
    peak_rss_mb: float
    exit_code: int
    note: str          # first stderr line (the refusal, when refused)


def _argv(command: str, d: Path, out: Path, cap: str | None) -> list[str]:
    base = [sys.executable, "-m", "hotspot"]
    capped = ["--max-file-mb", cap] if cap is not None else []
    if command in ("analyze", "plan"):
        plan = ["--plan", "--topk", "0"] if command == "plan" else []
        return base + ["analyze", str(d), "--format", "json", "--jobs", "1"] + plan + capped
    if command == "report":
        return base + ["report", str(d), "-o", str(out / "r.html"), "--force"] + capped
    return base + ["export", "perfetto", str(d), "-o", str(out / "t.json"), "--force"] + capped


def measure(folder: Path, sizes: Sequence[float], caps: Sequence[str | None] = (None,),
            commands: Sequence[str] = ("analyze", "plan", "report", "export"),
            env: dict[str, str] | None = None) -> list[Measurement]:
    """Peak RSS of each command on a huge code.json and a huge wave file of each size (MB), with
    the default cap (None) or the --max-file-mb values in `caps`; `env` is added to each run's
    environment. Each run gets an empty cache folder of its own: a first run, never a replay."""
    out: list[Measurement] = []
    folder.mkdir(parents=True, exist_ok=True)
    for mb in sizes:
        cases = (("code.json", _generated("huge_code_json", folder, mb), "code.json"),
                 ("wave file", _generated("huge_wave_file", folder, mb), "se0_sm0_sl0_wv0.json"))
        for case, d, name in cases:
            size = os.stat(d / name).st_size / MIB
            for command in commands:
                for cap in caps:
                    # a cold run: the result cache (on unless HOTSPOT_CACHE says otherwise) starts
                    # empty, so the analysis runs and its entry is written, as on a first run
                    with tempfile.TemporaryDirectory() as cache:
                        os.chmod(cache, 0o700)
                        run = run_once(_argv(command, d, folder, cap), sample_tree=False,
                                       env={**(env or {}), "XDG_CACHE_HOME": cache})
                    tail = run.stderr_tail.strip()
                    note = tail.splitlines()[-1][:160] if tail else ""
                    out.append(Measurement(case, command, round(size, 1), cap or "default",
                                           round(run.peak_rss_bytes / MIB, 1), run.exit_code, note))
    return out


def _generated(maker: str, folder: Path, mb: float) -> Path:
    """Generate in a child process: a child forked from a parent that built a 200 MB document
    would report the parent's pages in its own peak RSS (ru_maxrss counts them until exec)."""
    import subprocess

    code = (f"import sys; from pathlib import Path; from benchkit.hostile import {maker}; "
            f"print({maker}(Path(sys.argv[1]), float(sys.argv[2])))")
    scripts = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [scripts, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code, str(folder), str(mb)], env=env, check=True,
                         capture_output=True, text=True)
    return Path(out.stdout.strip())


def to_text(rows: Sequence[Measurement]) -> str:
    lines = [f"{'case':<10} {'command':<8} {'file MB':>8} {'cap':>8} {'peak RSS MB':>12} {'exit':>5}  note"]
    for r in rows:
        lines.append(f"{r.case:<10} {r.command:<8} {r.file_mb:>8.1f} {r.cap_mb:>8} "
                     f"{r.peak_rss_mb:>12.1f} {r.exit_code:>5}  {r.note}")
    return "\n".join(lines) + "\n"
