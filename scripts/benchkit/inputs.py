"""Benchmark inputs: generated dispatch dirs of a given size (cached) and measurements of any dir."""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from hotspot.errors import InputError
from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch, wave_bytes_estimate

# Realistic wave size: a 2,000-wave capture holds ~35 MB of wave JSON (issue 9, point 4).
TARGET_WAVE_BYTES = 35_000_000 // 2_000
# Main-loop trip counts tried when matching TARGET_WAVE_BYTES (a wave's size grows with its trips).
TRIP_CANDIDATES = range(1, 17)
SEED = 1
# Bumped when the layout of a cache entry changes; part of every cache key.
CACHE_FORMAT = 1
META_NAME = "bench-case.json"
WAVE_FILE_RE = re.compile(r"^se\d+_sm\d+_sl\d+_wv\d+\.json$")   # FORMATS.md §1 wave file names


@dataclass(frozen=True)
class DirStats:
    """What a dispatch dir (or a folder of them) holds, measured on disk."""

    path: Path
    waves: int             # wave files
    files: int             # all regular files
    wave_bytes: int        # bytes of wave JSON
    code_json: Path | None  # <path>/code.json when the path is a single dispatch dir


def dir_stats(path: Path) -> DirStats:
    waves = files = wave_bytes = 0
    stack = [str(path)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.is_file():
                    files += 1
                    if WAVE_FILE_RE.match(e.name):
                        waves += 1
                        wave_bytes += e.stat().st_size
    code = path / "code.json"
    return DirStats(path, waves, files, wave_bytes, code if code.is_file() else None)


def bench_program() -> tuple[InstructionMix, int]:
    """The default instruction mix with the trip count whose wave file is closest to TARGET_WAVE_BYTES."""
    best: tuple[int, InstructionMix, int] | None = None
    for trips in TRIP_CANDIDATES:
        mix = InstructionMix(loop_trips=trips)
        size = wave_bytes_estimate(DispatchSpec(program=mix), SEED)
        if best is None or abs(size - TARGET_WAVE_BYTES) < best[0]:
            best = (abs(size - TARGET_WAVE_BYTES), mix, size)
    assert best is not None
    return best[1], best[2]


def spec_for_waves(waves: int, mix: InstructionMix) -> DispatchSpec:
    return DispatchSpec(kernel="bench_kernel", program=mix, waves=waves)


def spec_for_mb(mb: float, mix: InstructionMix, wave_bytes: int) -> DispatchSpec:
    return spec_for_waves(max(1, math.ceil(mb * 1e6 / wave_bytes)), mix)


def cache_key(spec: DispatchSpec, seed: int = SEED) -> str:
    """Name of the cache entry: the parameters plus a hash of them and of the generator's source, so
    an edit to hotspot/synth never silently reuses dirs made by the old generator."""
    h = hashlib.sha256(f"{CACHE_FORMAT}|{seed}|{spec!r}".encode())
    for src in sorted((Path(__file__).resolve().parents[1] / "synth").glob("*.py")):
        h.update(src.read_bytes())
    trips = spec.program.loop_trips if isinstance(spec.program, InstructionMix) else 0
    return f"w{spec.waves}_t{trips}_s{seed}_{h.hexdigest()[:12]}"


def cached_dispatch(cache: Path, spec: DispatchSpec, seed: int = SEED) -> tuple[Path, bool]:
    """The dispatch dir for `spec` under `cache`, generating it when absent. Returns (dir, generated).

    Generation writes into `<key>.partial-<pid>` and renames it when complete, so an interrupted run
    never leaves an entry that looks finished. Nothing is ever deleted.
    """
    entry = cache / cache_key(spec, seed)
    if (entry / META_NAME).is_file():
        return entry / spec.dir_name, False
    cache.mkdir(parents=True, exist_ok=True)
    partial = cache / f"{entry.name}.partial-{os.getpid()}"
    ddir = make_dispatch(partial, spec, seed)
    st = dir_stats(ddir)
    meta = {"spec": repr(spec), "seed": seed, "waves": st.waves, "files": st.files, "wave_bytes": st.wave_bytes}
    (partial / META_NAME).write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))
    if entry.exists():   # entries only appear complete (rename below), so this one was made by hand
        raise InputError(f"{entry}: cache entry without {META_NAME}",
                         f"move it away or pick another --cache; the new copy is in {partial}")
    partial.rename(entry)
    return entry / spec.dir_name, True


def stale_partials(cache: Path) -> list[Path]:
    """Leftovers of interrupted generations (reported to the user, never removed by the benchmark)."""
    if not cache.is_dir():
        return []
    mine = f".partial-{os.getpid()}"
    return sorted(p for p in cache.iterdir() if ".partial-" in p.name and not p.name.endswith(mine))
