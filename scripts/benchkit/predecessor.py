#!/usr/bin/env python3
"""A stand-in for the predecessor's cost (docs/benchmark.md, "baseline"): what the FlyDSL skill's
hotspot_analyzer.py does per dispatch dir (../shared/docs/PEERS.md §1), written here from its
description, so hotspot can be timed against it with the same interpreter.

It parses the predecessor's command line (argparse), reads only code.json with the standard
library's json, classifies each row by substring (first match wins, as the predecessor does),
scans the ISA for the highest VGPR and the arch (three gfx950-only MFMA names), counts the static
instruction mix, sums stall per type, per source line (with its dominant type) and per
instruction, and prints its report: header, occupancy block, mix, stall by type with bars, and
the top 15 lines and instructions. Its numbers are not
hotspot's (the predecessor's classification and occupancy are wrong on purpose); only its cost
matters.

    python scripts/benchkit/predecessor.py DISPATCH_DIR [--topk 15]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

TOPK = 15
# The predecessor's stall types, tried in order against the whole text (first match wins).
TYPES = (("VMEM-load", ("buffer_load", "global_load", "s_buffer_load", "flat_load")),
         ("VMEM-store", ("buffer_store", "global_store")),
         ("VMEM-wait", ("vmcnt",)),
         ("LDS/SMEM-wait", ("lgkmcnt",)),
         ("barrier", ("s_barrier",)),
         ("LDS", ("ds_read", "ds_write")),
         ("SMEM", ("s_load",)),
         ("MFMA/FMA", ("v_mfma", "v_fma")))


def classify(text: str) -> str:
    for name, needles in TYPES:
        if any(n in text for n in needles):
            return name
    return "other"


VGPR_RE = re.compile(r"\bv\[?(\d+)")  # the predecessor's scan: first register of v[a:b]
GFX950_ONLY = ("v_mfma_f32_32x32x16", "v_mfma_f32_16x16x32", "v_mfma_scale")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="predecessor-style code.json pass")
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--dir", dest="dir_opt")
    ap.add_argument("--topk", type=int, default=TOPK)
    ap.add_argument("--mode", choices=("asm", "src", "both"), default="both")
    ap.add_argument("--kernel")
    a = ap.parse_args(argv)
    folder = a.dir or a.dir_opt
    if not folder:
        ap.error("give a dispatch dir")
    with open(Path(folder) / "code.json") as fh:
        doc = json.load(fh)
    rows = doc.get("code") or []
    by_type: dict[str, int] = {}
    mix: dict[str, int] = {}
    by_line: dict[str, list[int]] = {}
    line_types: dict[str, dict[str, int]] = {}
    instructions = []
    total_lat = total_stall = 0
    vgpr = 0
    arch = "gfx942"
    for row in rows:
        if not isinstance(row, list) or len(row) < 10:
            continue
        isa, source = str(row[0]), str(row[3])
        hit, lat, stall = int(row[6] or 0), int(row[7] or 0), int(row[8] or 0)
        total_lat += lat
        total_stall += stall
        for m in VGPR_RE.finditer(isa):
            vgpr = max(vgpr, int(m.group(1)) + 1)
        if any(name in isa for name in GFX950_ONLY):
            arch = "gfx950"
        kind = classify(isa)
        by_type[kind] = by_type.get(kind, 0) + stall
        mix[kind] = mix.get(kind, 0) + 1
        line = by_line.setdefault(source, [0, 0])
        line[0] += stall
        line[1] += hit
        types = line_types.setdefault(source, {})
        types[kind] = types.get(kind, 0) + stall
        instructions.append((stall, lat, hit, isa, source))
    pct = (lambda v: 100.0 * v / total_stall) if total_stall else (lambda v: 0.0)
    waves = min(8, 512 // max(8, -(-vgpr // 8) * 8)) if vgpr else 8
    more = f"{waves + 1} waves requires <= {512 // (waves + 1) // 8 * 8} VGPRs" if waves < 8 else "at the maximum"
    out = [f"instructions: {len(rows)}  total latency: {total_lat}  total stall: {total_stall}",
           f"occupancy: {arch}, {vgpr} VGPRs, {waves} waves/SIMD, limiter VGPR; {more}", "",
           "instruction mix: " + ", ".join(f"{k} {n}" for k, n in sorted(mix.items(), key=lambda kv: -kv[1])),
           "", "stall by type:"]
    for kind, v in sorted(by_type.items(), key=lambda kv: -kv[1]):
        out.append(f"  {kind:<14} {v:>12} {pct(v):6.1f}% {'#' * int(pct(v) / 2)}")
    out += ["", f"top {a.topk} source lines:"]
    for src, (v, hit) in sorted(by_line.items(), key=lambda kv: -kv[1][0])[:a.topk]:
        top = max(line_types[src].items(), key=lambda kv: kv[1])[0]
        out.append(f"  {v:>12} {pct(v):6.1f}% {v / hit if hit else 0:8.1f}/hit  {top:<14} {src}")
    out += ["", f"top {a.topk} instructions:"]
    for stall, lat, hit, isa, src in sorted(instructions, key=lambda r: -r[0])[:a.topk]:
        out.append(f"  {stall:>12} {pct(stall):6.1f}% {lat:>10} {hit:>8}  {isa[:60]}  {src}")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
