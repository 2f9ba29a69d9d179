#!/usr/bin/env python3
"""Generate a synthetic ATT ui_output dispatch directory (see docs/synthetic.md).

Example: python scripts/make_dispatch.py --out /tmp/synth --target-mb 35 --seed 1
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

from hotspot.errors import HotspotError
from hotspot.synth import DispatchSpec, InstructionMix, Layout, SourceSpec, make_dispatch, wave_bytes_estimate


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path, help="parent directory; the dispatch dir is created inside")
    ap.add_argument("--waves", type=int, default=16, help="traced waves (ignored with --target-mb)")
    ap.add_argument("--target-mb", type=float, help="pick the wave count to reach about this many MB of wave JSON")
    ap.add_argument("--instructions", type=int, help="static instruction rows (default mix: ~103 + waits)")
    ap.add_argument("--trips", type=int, default=8, help="main loop trip count (1 = no loop)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arch", default="gfx950", choices=["gfx942", "gfx950"])
    ap.add_argument("--kernel", default="synth_kernel_0", help="kernel name (any string)")
    ap.add_argument("--ses", type=int, default=4, help="shader engines traced")
    ap.add_argument("--simds", type=int, default=4)
    ap.add_argument("--slots", type=int, default=2, help="wave slots per SIMD")
    ap.add_argument("--dispatch-id", type=int, default=1)
    ap.add_argument("--no-debug-info", action="store_true", help="empty Source column")
    ap.add_argument("--inline-chains", action="store_true", help="some Source cells as 'a.h:1 -> k.py:2'")
    ap.add_argument("--snapshots", action="store_true", help="write snapshots.json and source_<i>_* files")
    ap.add_argument("--no-waitcnt", action="store_true", help="omit the waitcnt edges from wave files")
    ap.add_argument("--empty", action="store_true", help="an empty trace: code null, no wave files")
    ap.add_argument("--agent-info", action="store_true", help="write <out>/synth_agent_info.csv naming the arch")
    return ap.parse_args(argv)


def spec_of(a: argparse.Namespace) -> DispatchSpec:
    """The dispatch the options describe (scripts/benchkit reuses it: `--target-mb 200` there is
    the same input as here)."""
    mix = InstructionMix(loop_trips=a.trips)
    if a.instructions:
        mix = mix.scaled(a.instructions)
    spec = DispatchSpec(kernel=a.kernel, arch=a.arch, program=mix, waves=a.waves,
                        layout=Layout(ses=tuple(range(a.ses)), simds=a.simds, slots=a.slots),
                        sources=SourceSpec(debug_info=not a.no_debug_info, inline_chains=a.inline_chains,
                                           snapshots=a.snapshots),
                        empty=a.empty, waitcnt_edges=not a.no_waitcnt, agent_info=a.agent_info,
                        dispatch_id=a.dispatch_id)
    if a.target_mb and not a.empty:
        per_wave = wave_bytes_estimate(spec, a.seed)
        spec = replace(spec, waves=max(1, math.ceil(a.target_mb * 1e6 / per_wave)))
    return spec


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    try:
        spec = spec_of(a)
        t0 = time.perf_counter()
        ddir = make_dispatch(a.out, spec, a.seed)
    except HotspotError as e:
        print(f"make_dispatch: {e.message}" + (f" (next: {e.hint})" if e.hint else ""), file=sys.stderr)
        return e.exit_code
    mb = sum(f.stat().st_size for f in ddir.glob("se*_sm*_sl*_wv*.json")) / 1e6
    print(f"{ddir}  waves={spec.waves}  wave_json={mb:.1f} MB  {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(ddir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
