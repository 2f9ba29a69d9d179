"""Turn the FILE_OR_DIR arguments into CounterFiles, with the side files found beside them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hotspot.capture.counters.model import CounterFile
from hotspot.capture.counters.read_csv import read_counter_csv
from hotspot.capture.counters.read_rocpd import read_rocpd
from hotspot.capture.counters.read_side import read_agent_info, read_roofline, read_sysinfo
from hotspot.capture.sidefiles import AGENT_INFO
from hotspot.errors import InputError, bad_file

WORKLOAD_FILE = "pmc_perf.csv"          # rocprof-compute: merged per-dispatch counters
COUNTER_CSV_GLOB = "*counter_collection.csv"
ROCPD_GLOB = "*_results.db"
_LOOKED_FOR = f"{WORKLOAD_FILE}, {COUNTER_CSV_GLOB}, {ROCPD_GLOB}"


def load_counter_files(paths: list[Path]) -> list[CounterFile]:
    if not paths:
        raise InputError("no input given", "pass counter files or folders", code="usage")
    files: list[Path] = []
    for path in paths:
        if not path.exists():
            raise bad_file(path, "no such file or directory", "check the path")
        files.extend(_expand(path) if path.is_dir() else [path])
    seen: set[Path] = set()
    out: list[CounterFile] = []
    for f in files:
        key = f.resolve()
        if key in seen:
            continue
        seen.add(key)
        out.append(load_file(f))
    return out


def _expand(folder: Path) -> list[Path]:
    if (folder / WORKLOAD_FILE).is_file():
        return [folder / WORKLOAD_FILE]
    found = sorted(set(folder.rglob(WORKLOAD_FILE)) | set(folder.rglob(COUNTER_CSV_GLOB))
                   | set(folder.rglob(ROCPD_GLOB)))
    if not found:
        raise bad_file(folder, f"no counter files found (looked for {_LOOKED_FOR})",
                       "pass a rocprof-compute workload folder or rocprofv3 counter output")
    return found


def load_file(path: Path) -> CounterFile:
    if path.suffix.lower() == ".db":
        counters = read_rocpd(path)
    elif path.suffix.lower() == ".csv":
        counters = read_counter_csv(path)
    else:
        raise bad_file(path, "unknown input type (expected .csv or a rocpd .db)",
                       f"pass one of: {_LOOKED_FOR}, or a folder holding them")
    return _with_side_files(counters)


def _with_side_files(counters: CounterFile) -> CounterFile:
    folder = counters.path.parent
    arch_hints = list(counters.arch_hints)
    peaks = []
    products = list(counters.product_names)
    roofline = folder / "roofline.csv"
    if roofline.is_file():
        peaks += read_roofline(roofline)
    sysinfo = folder / "sysinfo.csv"
    if sysinfo.is_file():
        s_arch, s_peak, s_products = read_sysinfo(sysinfo)
        arch_hints += s_arch
        peaks += s_peak
        products += s_products
    for pattern in AGENT_INFO.globs:
        for info in sorted(folder.glob(pattern)):
            a_hints, a_products = read_agent_info(info)
            arch_hints += a_hints
            products += a_products
    return replace(counters, arch_hints=tuple(arch_hints), peak_hints=tuple(peaks),
                   product_names=tuple(dict.fromkeys(products)))
