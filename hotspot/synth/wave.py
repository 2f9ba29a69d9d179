"""Timing model of one wave: walk the program, produce decoder-shaped records, timeline and edges.

Times are relative to the wave's begin (0); the writer shifts them. Every quantity is a multiple of
the 4-cycle issue slot, as in real captures.

Model, per executed instruction (attempt = time the wave first tries to issue):
- an optional IDLE gap before it (arbiter loss, i-cache refetch after a taken branch);
- `s_waitcnt`: pops the oldest len-N entries of each counter list (the decoder's gfx9 rule, which
  also gives the waitcnt edges) and waits until those producers complete; IMMED records have
  duration == stall, at least one issue slot (as observed in real captures);
- `s_barrier`: waits a drawn skew (other waves of the workgroup are not simulated);
- MFMA: waits for the MFMA pipe (previous MFMA issue + passes x 4 cycles);
- VMEM/LDS/SMEM/VALU/SALU: occasional issue back-pressure stall, then one issue slot; memory ops
  complete at issue + a drawn latency, VMEM in order;
- `s_endpgm`: stall 0, lasts until every outstanding memory op has completed.
Timeline: gap -> IDLE, IMMED and s_endpgm -> WAIT, other stalls -> STALL, issue -> EXEC.
"""

from __future__ import annotations

import random
from typing import Any

from hotspot.synth import isa as I
from hotspot.synth.program import Code
from hotspot.synth.spec import LatencyModel
from hotspot.record import record

# Safety net against a runaway program (nested loops with huge trip counts).
MAX_RECORDS_PER_WAVE = 5_000_000


@record(frozen=False)
class WaveRun:
    records: list[list[int]]          # [time, category, stall, duration, line_number], time from 0
    timeline: list[list[int]]         # [[state, cycles], ...]
    edges: list[list[Any]]            # [[waitcnt_line, [[producer_line, 0], ...]], ...]
    end: int                          # relative end time
    hit: list[int]                    # per row index (0 = pseudo row)
    latency: list[int]
    stall: list[int]
    idle: list[int]
    wait_ready: list[tuple[int, int]]  # (record index of an s_waitcnt, completion time it waited for)


def _draw(rng: random.Random, lo_hi: tuple[int, int]) -> int:
    lo, hi = lo_hi
    return (lo + int(rng.random() * (hi - lo + 1))) // 4 * 4


def simulate(code: Code, lat: LatencyModel, rng: random.Random) -> WaveRun:
    rows = code.rows
    n_rows = len(rows) + 1
    hit = [0] * n_rows
    lsum = [0] * n_rows
    ssum = [0] * n_rows
    isum = [0] * n_rows
    records: list[list[int]] = []
    timeline: list[list[int]] = []
    edges: list[list[Any]] = []
    wait_ready: list[tuple[int, int]] = []
    lists: dict[str, list[tuple[int, int]]] = {"vm": [], "lgkm": []}   # (line, completion)
    issue = lat.issue
    last_vm_done = 0
    mfma_free = 0
    loop_count: dict[int, int] = {}

    def state(st: int, cycles: int) -> None:
        if cycles <= 0:
            return
        if timeline and timeline[-1][0] == st:
            timeline[-1][1] += cycles
        else:
            timeline.append([st, cycles])

    t = _draw(rng, lat.first_issue)
    state(I.STATE_IDLE, t)
    prev_end = 0
    extra_gap = 0
    pc = 0
    while True:
        if len(records) >= MAX_RECORDS_PER_WAVE:
            raise ValueError(f"a wave would execute more than {MAX_RECORDS_PER_WAVE} instructions")
        row = rows[pc]
        info = row.info
        line = pc + 1
        kind = info.kind
        gap = extra_gap
        extra_gap = 0
        if records and rng.random() < lat.gap_chance:
            gap += _draw(rng, lat.gap)
        if gap:
            state(I.STATE_IDLE, gap)
            t += gap
        attempt = t
        cat = info.category
        next_pc = pc + 1
        if kind == "waitcnt":
            need = I.waitcnt_fields(row.isa)
            ready = attempt
            for cname in ("lgkm", "vm"):          # decoder order: the lgkm entry first
                if cname not in need:
                    continue
                lst = lists[cname]
                k = len(lst) - need[cname]
                if k > 0:
                    popped = lst[:k]
                    del lst[:k]
                    edges.append([line, [[p, 0] for p, _ in popped]])
                    ready = max(ready, max(done for _, done in popped))
            if ready > attempt:
                wait_ready.append((len(records), ready))
            stall = max(issue, ready - attempt)
            dur = stall
            state(I.STATE_WAIT, dur)
        elif kind in ("barrier", "nop"):
            stall = max(issue, _draw(rng, lat.barrier)) if kind == "barrier" else issue
            dur = stall
            state(I.STATE_WAIT, dur)
        elif kind == "endpgm":
            drain = max([done for lst in lists.values() for _, done in lst] + [last_vm_done, attempt + issue])
            stall = 0
            dur = drain - attempt
            state(I.STATE_WAIT, dur)
        else:
            if kind == "mfma":
                stall = max(0, mfma_free - attempt)
            elif kind in ("salu", "branch", "smem", "message"):
                stall = _draw(rng, lat.pipe_stall) if rng.random() < lat.salu_stall_chance else 0
            else:
                stall = _draw(rng, lat.pipe_stall) if rng.random() < lat.pipe_stall_chance else 0
            dur = stall + issue
            state(I.STATE_STALL, stall)
            state(I.STATE_EXEC, issue)
            issued = attempt + stall
            if kind == "mfma":
                mfma_free = issued + info.mfma_passes * I.CYCLES_PER_PASS
            elif info.counters:
                if kind == "vmem_load" or kind == "flat":
                    done = max(issued + _draw(rng, lat.vmem_load), last_vm_done)
                elif kind == "vmem_store":
                    done = max(issued + _draw(rng, lat.vmem_store), last_vm_done)
                elif kind == "smem":
                    done = issued + _draw(rng, lat.smem)
                elif kind == "bperm":
                    done = issued + _draw(rng, lat.bperm)
                else:
                    done = issued + _draw(rng, lat.lds)
                if "vm" in info.counters:
                    last_vm_done = done
                for cname in info.counters:
                    lists[cname].append((line, done))
            if kind == "branch":
                taken = False
                if pc in code.loop_end:
                    start, trips = code.loop_end[pc]
                    c = loop_count.get(pc, 0) + 1
                    if c < trips:
                        loop_count[pc] = c
                        taken, next_pc = True, start
                    else:
                        loop_count[pc] = 0
                elif pc in code.forward:
                    target, p = code.forward[pc]
                    if rng.random() < p:
                        taken, next_pc = True, target
                if taken:
                    cat = I.CAT_JUMP
                    extra_gap = _draw(rng, lat.branch_gap)
                else:
                    cat = I.CAT_NEXT
        records.append([attempt, cat, stall, dur, line])
        hit[line] += 1
        lsum[line] += dur
        ssum[line] += stall
        isum[line] += attempt - prev_end
        t = attempt + dur
        prev_end = t
        if kind == "endpgm" or next_pc >= len(rows):
            break
        pc = next_pc
    return WaveRun(records, timeline, edges, t, hit, lsum, ssum, isum, wait_ready)
