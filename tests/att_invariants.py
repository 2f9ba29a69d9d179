"""Invariant checker for any ATT ui_output dispatch dir (real or generated).

`check_dispatch_invariants(dir)` returns a list of problems (empty = OK). The default mode holds on
the real corpus; `strict=True` adds what the generator guarantees and a real decoder only nearly does
(exact timeline reconstruction, no overlapping records, rule-exact waitcnt edges, exact wstates).

Independent of hotspot.synth on purpose: the rules are re-implemented here from FORMATS.md §1.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import orjson

WAVE_FILE = re.compile(r"^se(\d+)_sm(\d+)_sl(\d+)_wv(\d+)\.json$")
CODE_COLUMNS = ["ISA", "_", "LineNumber", "Source", "Codeobj", "Vaddr", "Hit", "Latency", "Stall", "Idle"]
CATEGORIES = range(0, 13)
IMMED, MESSAGE, JUMP, NEXT = 9, 11, 7, 8
IDLE, EXEC, WAIT, STALL = 1, 2, 3, 4
_CNT = re.compile(r"\b(vmcnt|lgkmcnt)\((\d+)\)")


def _load(path: Path, problems: list[str]):
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as e:
        problems.append(f"{path.name}: unreadable JSON ({e})")
        return None


def _mn(isa: str) -> str:
    return isa.split(None, 1)[0] if isa else ""


def counter_lists(mn: str) -> tuple[str, ...]:
    if mn.startswith("flat_"):
        return ("vm", "lgkm")
    if mn.startswith(("buffer_", "global_", "scratch_")):
        return ("vm",)
    if mn.startswith(("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_sendmsg", "ds_")):
        return ("lgkm",)
    return ()


def rule_edges(records: list, isa: dict[int, str]) -> list:
    """The decoder's gfx9 waitcnt edges recomputed from the executed order (FORMATS.md §1.2)."""
    lists: dict[str, list[int]] = {"vm": [], "lgkm": []}
    out: list = []
    for rec in records:
        text = isa.get(rec[4], "")
        mn = _mn(text)
        if mn == "s_waitcnt":
            want = {name[:-3]: int(v) for name, v in _CNT.findall(text)}
            for c in ("lgkm", "vm"):
                if c in want and len(lists[c]) > want[c]:
                    k = len(lists[c]) - want[c]
                    out.append([rec[4], [[p, 0] for p in lists[c][:k]]])
                    del lists[c][:k]
        for c in counter_lists(mn):
            lists[c].append(rec[4])
    return out


def expected_timeline(begin: int, records: list) -> list[list[int]]:
    """The generator's (and, in totals, the decoder's) state rules: gap IDLE, IMMED and s_endpgm
    WAIT, other stall STALL, issue EXEC; consecutive equal states merged."""
    tl: list[list[int]] = []

    def put(st: int, cy: int) -> None:
        if cy > 0:
            if tl and tl[-1][0] == st:
                tl[-1][1] += cy
            else:
                tl.append([st, cy])

    prev = begin
    for t, cat, stall, dur, _ in records:
        put(IDLE, t - prev)
        if cat in (IMMED, MESSAGE):
            put(WAIT, dur)
        else:
            put(STALL, stall)
            put(EXEC, dur - stall)
        prev = t + dur
    return tl


def _header_ok(header) -> bool:
    names = [h.strip() for h in header.split(",")] if isinstance(header, str) else header
    return isinstance(names, list) and [str(n) for n in names[:10]] == CODE_COLUMNS


def check_dispatch_invariants(ddir: Path | str, *, strict: bool = False) -> list[str]:
    ddir = Path(ddir)
    p: list[str] = []
    code = _load(ddir / "code.json", p)
    fnames = _load(ddir / "filenames.json", p)
    occ = _load(ddir / "occupancy.json", p)
    if code is None or fnames is None or occ is None:
        return p
    if code.get("version") != "3.0.0":
        p.append(f"code.json: version {code.get('version')!r} != '3.0.0'")
    if not _header_ok(code.get("header")):
        p.append(f"code.json: header {code.get('header')!r} does not start with {CODE_COLUMNS}")
    wave_files = sorted(f.name for f in ddir.iterdir() if WAVE_FILE.match(f.name))
    rows = code.get("code")
    if rows is None:
        if wave_files:
            p.append(f"code.json: code is null but {len(wave_files)} wave files exist")
        if fnames.get("wave_filenames"):
            p.append("filenames.json: wave_filenames not empty for an empty trace")
        return p

    # code.json rows
    isa: dict[int, str] = {}
    by_line: dict[int, list] = {}
    last = -1
    for i, r in enumerate(rows):
        if not isinstance(r, list) or len(r) < 10:
            p.append(f"code.json: row {i} has fewer than 10 columns")
            continue
        ln = r[2]
        if not all(isinstance(r[k], int) for k in (1, 2, 4, 5, 6, 7, 8, 9)) or not isinstance(r[0], str) \
                or not isinstance(r[3], str):
            p.append(f"code.json: row {i} has wrongly typed columns")
            continue
        if ln <= last:
            p.append(f"code.json: rows not sorted by LineNumber at row {i} ({ln} after {last})")
        last = ln
        if r[1] != 0:
            p.append(f"code.json: row {i} column _ is {r[1]}, expected 0")
        if min(r[6:10]) < 0 or r[7] < r[8]:
            p.append(f"code.json: row {i} has negative counts or Latency < Stall")
        isa[ln] = r[0]
        by_line[ln] = r
    if rows and not (isinstance(rows[0], list) and str(rows[0][0]).startswith("; ")):
        p.append("code.json: first row is not a kernel pseudo row '; <symbol>'")

    # filenames.json
    if fnames.get("gfxip") != 9 or fnames.get("version") != "3.0.0":
        p.append(f"filenames.json: gfxip {fnames.get('gfxip')!r} / version {fnames.get('version')!r}")
    listed: dict[str, tuple[int, int, int, int, int, int]] = {}
    wf = fnames.get("wave_filenames") or {}
    for se, simds in wf.items():
        for simd, slots in simds.items():
            for slot, seq in slots.items():
                for n, entry in seq.items():
                    if not (isinstance(entry, list) and len(entry) == 3):
                        p.append(f"filenames.json: bad entry at {se}/{simd}/{slot}/{n}")
                        continue
                    name, b, e = entry
                    want = f"se{se}_sm{simd}_sl{slot}_wv{n}.json"
                    if name != want:
                        p.append(f"filenames.json: {se}/{simd}/{slot}/{n} names {name}, expected {want}")
                    listed[name] = (int(se), int(simd), int(slot), int(n), b, e)
    if sorted(listed) != wave_files:
        p.append(f"filenames.json lists {len(listed)} wave files, directory has {len(wave_files)}")

    # waves
    hit: Counter = Counter()
    lat: Counter = Counter()
    stall: Counter = Counter()
    idle: Counter = Counter()
    intervals: list[tuple[int, int, list]] = []     # (begin, end, timeline) for wstates
    wave_keys: set[tuple[int, int, int, int, int]] = set()
    for name in wave_files:
        w_all = _load(ddir / name, p)
        if w_all is None:
            continue
        m = WAVE_FILE.match(name)
        se, simd, slot, n = (int(g) for g in m.groups())
        w = w_all.get("wave") or {}
        q = f"{name}:"
        if w_all.get("name") != f"SE{se}":
            p.append(f"{q} name {w_all.get('name')!r} != 'SE{se}'")
        if w.get("simd") != simd or w.get("slot") != slot:
            p.append(f"{q} simd/slot fields disagree with the file name")
        begin, end = w.get("begin"), w.get("end")
        if not isinstance(begin, int) or not isinstance(end, int) or end < begin:
            p.append(f"{q} bad begin/end")
            continue
        if name in listed and listed[name][4:] != (begin, end):
            p.append(f"{q} begin/end {begin}/{end} differ from filenames.json {listed[name][4:]}")
        if w_all.get("duration") != end - begin:
            p.append(f"{q} duration {w_all.get('duration')} != end - begin {end - begin}")
        recs = w.get("instructions") or []
        if w_all.get("num_insts") != len(recs):
            p.append(f"{q} num_insts {w_all.get('num_insts')} != {len(recs)} records")
        wave_keys.add((se, w.get("cu"), simd, slot, begin))
        prev_t, prev_end = begin, begin
        bad_rec = overlap = 0
        imm_stall = all_stall = 0
        for rec in recs:
            if not (isinstance(rec, list) and len(rec) == 5 and all(isinstance(x, int) for x in rec)):
                bad_rec += 1
                continue
            t, cat, st, du, ln = rec
            if cat not in CATEGORIES or ln not in isa or st < 0 or du < st or t < prev_t:
                bad_rec += 1
            if t < prev_end:
                overlap += 1
            mn = _mn(isa.get(ln, ""))
            if strict and (cat in (JUMP, NEXT)) != mn.startswith(("s_cbranch", "s_branch")):
                bad_rec += 1
            hit[ln] += 1
            lat[ln] += du
            stall[ln] += st
            idle[ln] += max(0, t - prev_end)
            all_stall += st
            if cat == IMMED:
                imm_stall += st
            prev_t, prev_end = t, t + du
        if bad_rec:
            p.append(f"{q} {bad_rec} malformed or non-monotonic instruction records")
        if strict and overlap:
            p.append(f"{q} {overlap} records start before the previous one ended")
        tl = w.get("timeline") or []
        if not all(isinstance(x, list) and len(x) == 2 and x[0] in range(5) and isinstance(x[1], int) and x[1] >= 0
                   for x in tl):
            p.append(f"{q} malformed timeline")
            continue
        tl_sum = sum(x[1] for x in tl)
        last_end = prev_end if recs else begin
        if strict:
            if tl_sum != end - begin:
                p.append(f"{q} timeline sums to {tl_sum}, end - begin is {end - begin}")
            if last_end != end:
                p.append(f"{q} last instruction ends at {last_end}, wave end is {end}")
            if tl != expected_timeline(begin, recs):
                p.append(f"{q} timeline does not follow the records (IDLE gaps, WAIT/STALL stalls, EXEC issue)")
        else:
            # real decoders: the sum reaches the later of `end` and the last record's end (s_endpgm quirk)
            if tl_sum != max(end, last_end) - begin:
                p.append(f"{q} timeline sums to {tl_sum}, expected {max(end, last_end) - begin}")
        waits = sum(x[1] for x in tl if x[0] == WAIT)
        stalls = sum(x[1] for x in tl if x[0] == STALL)
        if waits < imm_stall or waits + stalls < all_stall:
            p.append(f"{q} timeline WAIT {waits} / STALL {stalls} below the records' stalls ({imm_stall} / {all_stall})")
        if "waitcnt" in w:
            edges = w["waitcnt"]
            ok_shape = isinstance(edges, list) and all(
                isinstance(e, list) and len(e) == 2 and _mn(isa.get(e[0], "")) == "s_waitcnt"
                and all(isinstance(pr, list) and len(pr) == 2 and counter_lists(_mn(isa.get(pr[0], "")))
                        for pr in e[1]) for e in edges)
            if not ok_shape:
                p.append(f"{q} waitcnt edges malformed or not pointing at s_waitcnt / memory rows")
            elif strict and edges != rule_edges(recs, isa):
                p.append(f"{q} waitcnt edges differ from the gfx9 counter rules")
        intervals.append((begin, end, tl))

    for ln, r in by_line.items():
        got = (hit[ln], lat[ln], stall[ln], idle[ln])
        if tuple(r[6:10]) != got:
            p.append(f"code.json: LineNumber {ln} Hit/Latency/Stall/Idle {tuple(r[6:10])} != wave sums {got}")
    stray = set(hit) - set(by_line)
    if stray:
        p.append(f"wave records point at {len(stray)} LineNumbers missing from code.json")

    _check_occupancy(occ, wave_keys, intervals, listed, p)
    _check_wstates(ddir, intervals, strict, p)
    _check_realtime(ddir, p)
    _check_snapshots(ddir, strict, p)
    return p


def _check_occupancy(occ: dict, wave_keys: set, intervals: list, listed: dict, p: list[str]) -> None:
    if occ.get("version") != "3.0.0" or not isinstance(occ.get("dispatches"), dict):
        p.append("occupancy.json: missing version 3.0.0 or dispatches")
        return
    ids = {int(k) for k in occ["dispatches"]}
    starts: set = set()
    ends: set = set()
    for key, rows in occ.items():
        if not key.isdigit():
            continue
        times = [r[0] for r in rows]
        if times != sorted(times):
            p.append(f"occupancy.json: SE {key} rows not sorted by time")
        balance: Counter = Counter()
        for r in rows:
            if len(r) < 6 or r[4] not in (0, 1) or r[5] not in ids:
                p.append(f"occupancy.json: SE {key} bad row {r}")
                break
            (starts if r[4] else ends).add((int(key), r[1], r[2], r[3], r[0]))
            balance[(r[1], r[2], r[3])] += 1 if r[4] else -1
        if any(balance.values()):
            p.append(f"occupancy.json: SE {key} has unmatched wave starts/ends")
    missing = [k for k in wave_keys if k not in starts]
    if missing:
        p.append(f"occupancy.json: {len(missing)} traced waves have no start row (e.g. {missing[0]})")
    for name, (se, simd, slot, _, b, e) in listed.items():
        if not any((se, cu, simd, slot, e) in ends for cu in {k[1] for k in wave_keys if k[0] == se}):
            p.append(f"occupancy.json: no end row for {name} at {e}")
            break


def _check_wstates(ddir: Path, intervals: list, strict: bool, p: list[str]) -> None:
    n_waves = len(intervals)
    for f in sorted(ddir.glob("wstates*.json")):
        ws = _load(f, p)
        if ws is None:
            continue
        times, states = ws.get("time"), ws.get("state")
        if ws.get("name") != f.name or not isinstance(times, list) or not isinstance(states, list) \
                or len(times) != len(states):
            p.append(f"{f.name}: needs name, and time/state lists of equal length")
            continue
        if any(b <= a for a, b in zip(times, times[1:])) or any(not isinstance(s, int) or s < 0 for s in states):
            p.append(f"{f.name}: times not increasing or negative wave counts")
        if strict:
            if max(states, default=0) > n_waves:
                p.append(f"{f.name}: more waves in a state than traced waves")
            k = int(f.name[len("wstates"):-len(".json")])
            step = 0
            for t in times:
                step = math.gcd(step, t)
            if step and [times, states] != _sampled(intervals, k, step):
                p.append(f"{f.name}: step function differs from the wave timelines sampled every {step} cycles")


def _sampled(intervals: list, state: int, step: int) -> list[list[int]]:
    counts: Counter = Counter()
    for begin, _end, tl in intervals:
        t = begin
        for st, cy in tl:
            if st == state:
                for j in range(-(-t // step), -(-(t + cy) // step)):
                    counts[j] += 1
            t += cy
    times, values, prev = [], [], 0
    if counts:
        for j in range(min(counts), max(counts) + 2):
            if counts[j] != prev:
                times.append(j * step)
                values.append(counts[j])
                prev = counts[j]
    return [times, values]


def _check_realtime(ddir: Path, p: list[str]) -> None:
    f = ddir / "realtime.json"
    if not f.exists():
        return
    rt = _load(f, p)
    if rt is None:
        return
    if not isinstance(rt.get("metadata", {}).get("frequency"), int):
        p.append("realtime.json: metadata.frequency missing")
    for key, pairs in rt.items():
        if key.startswith("SE"):
            if not all(isinstance(x, list) and len(x) == 2 for x in pairs) or \
                    any(b[0] < a[0] or b[1] < a[1] for a, b in zip(pairs, pairs[1:])):
                p.append(f"realtime.json: {key} pairs malformed or decreasing")


def _check_snapshots(ddir: Path, strict: bool, p: list[str]) -> None:
    f = ddir / "snapshots.json"
    if not f.exists():
        return
    snap = _load(f, p)
    leaves: list[str] = []

    def walk(node) -> None:
        for v in node.values():
            if isinstance(v, dict):
                walk(v)
            else:
                leaves.append(v)

    if not isinstance(snap, dict):
        p.append("snapshots.json: not an object")
        return
    walk(snap)
    for leaf in leaves:
        if not isinstance(leaf, str) or "/" in leaf or not leaf.startswith("source_"):
            p.append(f"snapshots.json: bad leaf {leaf!r}")
        elif strict and not (ddir / leaf).is_file():
            p.append(f"snapshots.json: {leaf} missing from the directory")


def waitcnt_agreement(ddir: Path | str) -> tuple[int, int]:
    """(waves whose `waitcnt` edges equal the counter rules, waves with a `waitcnt` key)."""
    ddir = Path(ddir)
    code = orjson.loads((ddir / "code.json").read_bytes())
    isa = {r[2]: r[0] for r in code.get("code") or []}
    agree = total = 0
    for f in sorted(ddir.iterdir()):
        if WAVE_FILE.match(f.name):
            w = orjson.loads(f.read_bytes())["wave"]
            if "waitcnt" in w:
                total += 1
                agree += w["waitcnt"] == rule_edges(w["instructions"], isa)
    return agree, total
