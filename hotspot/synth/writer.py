"""Write a synthetic ui_output dispatch directory (decoder format 3.0.0, FORMATS.md §1).

Waves are streamed: each wave file is serialized and written before the next is built. A handful of
distinct wave timings (`spec.variants`) are simulated and reused with a time shift, so the cost per
extra wave is one list comprehension plus orjson; code.json sums are the variants' sums times their
use counts, which keeps them exactly equal to the sums over the wave files.
"""

from __future__ import annotations

import bisect
import csv
import math
import random
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from hotspot.errors import UsageError
from hotspot.synth import isa as I
from hotspot.synth.program import Code, build
from hotspot.synth.spec import DispatchSpec
from hotspot.synth.wave import WaveRun, simulate
from hotspot.record import record

HEADER = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
VERSION = "3.0.0"
REALTIME_HZ = 100_000_000  # realtime.json clock (FORMATS.md §1.3)
REALTIME_BASE = 236_566_044_000_000  # an arbitrary realtime-clock origin of the same magnitude as real ones
# Records of simulated variants kept in memory at once; beyond it fewer distinct variants are used.
VARIANT_RECORD_BUDGET = 2_000_000
# Grid points sampled for wstates<k>.json; the sampling step grows past it (4 cycles = exact).
WSTATE_SAMPLE_BUDGET = 200_000
# Agent-info header as written by rocprofv3 (FORMATS.md §3; copied from the corpus files).
AGENT_INFO_COLUMNS = (
    "Node_Id,Logical_Node_Id,Agent_Type,Cpu_Cores_Count,Simd_Count,Cpu_Core_Id_Base,Simd_Id_Base,"
    "Max_Waves_Per_Simd,Lds_Size_In_Kb,Gds_Size_In_Kb,Num_Gws,Wave_Front_Size,Num_Xcc,Cu_Count,Array_Count,"
    "Num_Shader_Banks,Simd_Arrays_Per_Engine,Cu_Per_Simd_Array,Simd_Per_Cu,Max_Slots_Scratch_Cu,"
    "Gfx_Target_Version,Vendor_Id,Device_Id,Location_Id,Domain,Drm_Render_Minor,Num_Sdma_Engines,"
    "Num_Sdma_Xgmi_Engines,Num_Sdma_Queues_Per_Engine,Num_Cp_Queues,Max_Engine_Clk_Ccompute,"
    "Max_Engine_Clk_Fcompute,Sdma_Fw_Version,Fw_Version,Capability,Cu_Per_Engine,Max_Waves_Per_Cu,Family_Id,"
    "Workgroup_Max_Size,Grid_Max_Size,Local_Mem_Size,Hive_Id,Gpu_Id,Workgroup_Max_Dim_X,Workgroup_Max_Dim_Y,"
    "Workgroup_Max_Dim_Z,Grid_Max_Dim_X,Grid_Max_Dim_Y,Grid_Max_Dim_Z,Name,Vendor_Name,Product_Name,Model_Name"
).split(",")


@record
class _Slot:
    se: int
    simd: int
    slot: int
    waves: int


def _rng(seed: int, stream: int) -> random.Random:
    # distinct, reproducible streams per purpose/variant (integer seeding is platform independent)
    return random.Random(seed * 1_000_003 + stream)


def _dump(path: Path, obj: object) -> int:
    data = orjson.dumps(obj)
    path.write_bytes(data)
    return len(data)


def make_dispatch(out_dir: Path, spec: DispatchSpec, seed: int = 0) -> Path:
    """Create `out_dir/<spec.dir_name>` (must not exist or be empty) and return its path."""
    spec.validate()
    out_dir = Path(out_dir)
    ddir = out_dir / spec.dir_name
    if ddir.exists() and any(ddir.iterdir()):
        raise UsageError(f"{ddir}: directory exists and is not empty", "pick another --out or remove it")
    ddir.mkdir(parents=True, exist_ok=True)
    if spec.agent_info:
        _write_agent_info(out_dir / f"{spec.prefix}_agent_info.csv", spec.arch)
    if spec.empty:
        _write_empty(ddir, spec)
        return ddir

    code = build(spec.program, spec.arch, spec.sources, _rng(seed, 1))
    lat = spec.latency
    first = simulate(code, lat, _rng(seed, 1000))
    per_wave = max(1, len(first.records))
    n_var = max(1, min(spec.variants, spec.waves, VARIANT_RECORD_BUDGET // per_wave))
    variants: list[WaveRun] = [first] + [simulate(code, lat, _rng(seed, 1000 + v)) for v in range(1, n_var)]
    uses = [0] * n_var

    # schedule: which variant each wave uses and when it begins (slots run their waves back to back)
    lay = spec.layout
    sched_rng = _rng(seed, 2)
    # deal waves slot-major so a few waves still spread over SEs and SIMDs; write SE-major like the decoder
    groups = [(se, simd, slot) for slot in range(lay.slots) for simd in range(lay.simds) for se in lay.ses]
    per, extra = divmod(spec.waves, len(groups))
    slots = sorted((_Slot(se, simd, slot, per + (g < extra)) for g, (se, simd, slot) in enumerate(groups)),
                   key=lambda s: (lay.ses.index(s.se), s.simd, s.slot))
    schedule: list[tuple[_Slot, int, int, int]] = []    # (slot, n, variant, begin)
    wave_index = 0
    for s in slots:
        t = (spec.start_time + lay.ses.index(s.se) * lat.se_stagger
             + (s.slot * lay.simds + s.simd) * lat.slot_stagger)
        for n in range(s.waves):
            v = wave_index if wave_index < n_var else int(sched_rng.random() * n_var)
            schedule.append((s, n, v, t))
            t += variants[v].end + _draw4(sched_rng, lat.launch_gap)
            wave_index += 1
    total_cycles = sum(variants[v].end for _, _, v, _ in schedule)
    step = max(4, math.ceil(total_cycles / WSTATE_SAMPLE_BUDGET / 4) * 4)
    ws = _WaveStates(step)
    var_bounds = [_bounds(v.timeline) for v in variants]

    filenames: dict[str, Any] = {}
    occupancy: dict[int, list[tuple[int, int, int, int, int, int]]] = {se: [] for se in lay.ses}
    se_span: dict[int, list[int]] = {}
    for s, n, v, begin in schedule:
        run = variants[v]
        uses[v] += 1
        end = begin + run.end
        name = f"se{s.se}_sm{s.simd}_sl{s.slot}_wv{n}.json"
        recs = [[t + begin, c, st, du, ln] for t, c, st, du, ln in run.records]
        wave = {"begin": begin, "cu": lay.cu, "end": end, "id": n, "instructions": recs,
                "simd": s.simd, "slot": s.slot, "timeline": run.timeline}
        if spec.waitcnt_edges:
            wave["waitcnt"] = run.edges
        n_insts = len(recs)
        (ddir / name).write_bytes(orjson.dumps({"duration": run.end, "name": f"SE{s.se}", "num_insts": n_insts,
                                                "num_stitched": n_insts, "wave": wave}))
        del recs, wave
        filenames.setdefault(str(s.se), {}).setdefault(str(s.simd), {}).setdefault(str(s.slot), {})[str(n)] = \
            [name, begin, end]
        rows = occupancy[s.se]
        rows.append((begin, lay.cu, s.simd, s.slot, 1, 1))
        rows.append((end, lay.cu, s.simd, s.slot, 0, 1))
        for k, cu in enumerate(lay.other_cus):
            shift = 4 * (k + 1) * (2 + s.simd)   # untraced CUs run the same kind of waves, a little offset
            rows.append((begin + shift, cu, s.simd, s.slot, 1, 1))
            rows.append((end + shift, cu, s.simd, s.slot, 0, 1))
        span = se_span.setdefault(s.se, [begin, end])
        span[0] = min(span[0], begin)
        span[1] = max(span[1], end)
        ws.add(begin, end, var_bounds[v])

    _write_code_json(ddir, spec, code, variants, uses)
    _dump(ddir / "filenames.json", {"counter_names": [], "gfxip": 9, "gfxv": "vega", "global_begin_time": 0,
                                    "version": VERSION, "wave_filenames": filenames})
    occ: dict[str, object] = {}
    for se in lay.ses:
        occ[str(se)] = [list(r) for r in sorted(occupancy[se], key=lambda r: (r[0], r[4], r[1], r[2], r[3]))]
    occ["dispatches"] = {"0": "0 / 0x0", "1": spec.kernel}
    occ["version"] = VERSION
    _dump(ddir / "occupancy.json", occ)
    ws.write(ddir)
    _write_realtime(ddir, spec, se_span)
    if spec.sources.snapshots and spec.sources.debug_info:
        _write_snapshots(ddir, code)
    return ddir


def _draw4(rng: random.Random, lo_hi: tuple[int, int]) -> int:
    lo, hi = lo_hi
    return (lo + int(rng.random() * (hi - lo + 1))) // 4 * 4


def _write_code_json(ddir: Path, spec: DispatchSpec, code: Code, variants: list[WaveRun], uses: list[int]) -> None:
    n = len(code.rows) + 1
    tot = {k: [0] * n for k in ("hit", "latency", "stall", "idle")}
    for run, u in zip(variants, uses):
        if u:
            for key in tot:
                arr, src = tot[key], getattr(run, key)
                for i in range(n):
                    arr[i] += src[i] * u
    vaddr = spec.base_vaddr
    rows: list[list[Any]] = [[f"; {spec.kernel}", 0, 0, spec.demangled or "", spec.codeobj, vaddr, 0, 0, 0, 0]]
    for i, row in enumerate(code.rows, start=1):
        rows.append([row.isa, 0, i, row.source, spec.codeobj, vaddr,
                     tot["hit"][i], tot["latency"][i], tot["stall"][i], tot["idle"][i]])
        vaddr += I.instruction_size(row.isa)
    _dump(ddir / "code.json", {"code": rows, "header": HEADER, "version": VERSION})


def _write_empty(ddir: Path, spec: DispatchSpec) -> None:
    _dump(ddir / "code.json", {"code": None, "header": HEADER, "version": VERSION})
    _dump(ddir / "filenames.json", {"counter_names": [], "gfxip": 9, "gfxv": "vega", "global_begin_time": 0,
                                    "version": VERSION, "wave_filenames": {}})
    _dump(ddir / "occupancy.json", {"dispatches": {"0": "0 / 0x0"}, "version": VERSION})


def _bounds(timeline: list[list[int]]) -> tuple[list[int], list[int]]:
    starts, states, t = [], [], 0
    for st, cy in timeline:
        starts.append(t)
        states.append(st)
        t += cy
    return starts, states


class _WaveStates:
    """wstates<k>.json: number of traced waves in state k, sampled every `step` cycles (4 = exact)."""

    def __init__(self, step: int) -> None:
        self.step = step
        self.counts: dict[int, dict[int, int]] = {}

    def add(self, begin: int, end: int, bounds: tuple[list[int], list[int]]) -> None:
        starts, states = bounds
        w = self.step
        for j in range(-(-begin // w), -(-end // w)):
            st = states[bisect.bisect_right(starts, j * w - begin) - 1]
            d = self.counts.setdefault(st, {})
            d[j] = d.get(j, 0) + 1

    def write(self, ddir: Path) -> None:
        for st in sorted(self.counts):
            d = self.counts[st]
            times: list[int] = []
            values: list[int] = []
            prev = 0
            for j in range(min(d), max(d) + 2):
                v = d.get(j, 0)
                if v != prev:
                    times.append(j * self.step)
                    values.append(v)
                    prev = v
            name = f"wstates{st}.json"
            _dump(ddir / name, {"name": name, "state": values, "time": times})


def _write_realtime(ddir: Path, spec: DispatchSpec, se_span: dict[int, list[int]]) -> None:
    mhz = I.ENGINE_CLOCK_MHZ[spec.arch]
    t0 = min(b for b, _ in se_span.values())
    out: dict[str, object] = {}
    for se in spec.layout.ses:
        if se not in se_span:
            continue
        b, e = se_span[se]
        out[f"SE{se}"] = [[g, REALTIME_BASE + (g - t0) * (REALTIME_HZ // 1_000_000) // mhz] for g in (b, e)]
    out["metadata"] = {"descriptor": "[gfx_clock, realtime_clock]", "frequency": REALTIME_HZ}
    _dump(ddir / "realtime.json", out)


def _write_snapshots(ddir: Path, code: Code) -> None:
    max_line: dict[str, int] = {}
    for row in code.rows:
        for part in row.source.split(" -> "):
            path, _, line = part.rpartition(":")
            if path and line.isdigit():
                max_line[path] = max(max_line.get(path, 0), int(line))
    tree: dict[str, Any] = {}
    for i, path in enumerate(sorted(max_line)):
        p = PurePosixPath(path)
        local = f"source_{i}_{p.name}"
        node = tree
        for comp in p.parts[:-1]:
            node = node.setdefault(comp, {})
        node[p.name] = local
        lines = [f"# {p.name} line {k}: synthetic source for the generated kernel" for k in range(1, max_line[path] + 6)]
        (ddir / local).write_text("\n".join(lines) + "\n", encoding="utf-8")
    _dump(ddir / "snapshots.json", tree)


def _write_agent_info(path: Path, arch: str) -> None:
    prod = I.PRODUCT[arch]
    row: dict[str, Any] = {c: 0 for c in AGENT_INFO_COLUMNS}
    row.update({"Node_Id": 2, "Logical_Node_Id": 2, "Agent_Type": "GPU", "Simd_Count": 4 * prod["Cu_Count"],
                "Max_Waves_Per_Simd": 8, "Lds_Size_In_Kb": prod["Lds_Size_In_Kb"], "Wave_Front_Size": 64,
                "Num_Xcc": prod["Num_Xcc"], "Cu_Count": prod["Cu_Count"], "Simd_Per_Cu": 4,
                "Gfx_Target_Version": prod["Gfx_Target_Version"], "Max_Waves_Per_Cu": 32,
                "Max_Engine_Clk_Fcompute": I.ENGINE_CLOCK_MHZ[arch], "Workgroup_Max_Size": 1024,
                "Name": arch, "Vendor_Name": "AMD", "Product_Name": prod["Product_Name"], "Model_Name": ""})
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(AGENT_INFO_COLUMNS)
        w.writerow([row[c] for c in AGENT_INFO_COLUMNS])


def wave_bytes_estimate(spec: DispatchSpec, seed: int = 0) -> int:
    """Bytes of one wave file of this spec (one simulated wave, realistic absolute times)."""
    spec.validate()
    code = build(spec.program, spec.arch, spec.sources, _rng(seed, 1))
    run = simulate(code, spec.latency, _rng(seed, 1000))
    begin = spec.start_time * 20
    wave = {"begin": begin, "cu": spec.layout.cu, "end": begin + run.end, "id": 0,
            "instructions": [[r[0] + begin, r[1], r[2], r[3], r[4]] for r in run.records],
            "simd": 0, "slot": 0, "timeline": run.timeline}
    if spec.waitcnt_edges:
        wave["waitcnt"] = run.edges
    return len(orjson.dumps({"duration": run.end, "name": "SE0", "num_insts": len(run.records),
                             "num_stitched": len(run.records), "wave": wave}))
