#!/usr/bin/env python3
"""Regenerate the example dispatch bundled in hotspot/examples/data (deterministic).

    python scripts/make_example.py [--force]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hotspot.synth import DispatchSpec, InstructionMix, SourceSpec, make_dispatch  # noqa: E402

OUT = ROOT / "hotspot" / "examples" / "data" / "example_run"
# The example's source snapshots hold a kernel source written by hand to match the generated ISA line
# for line (tests/test_example_source.py checks it); a regeneration keeps them instead of the
# generator's placeholder text.

SPEC = DispatchSpec(
    kernel="gemm_bf16_tile128x128_0",
    arch="gfx950",
    program=InstructionMix(vmem_loads=8, vmem_stores=4, lds_reads=12, lds_writes=6, bpermutes=2,
                           smem_loads=4, mfma=16, valu=36, salu=18, branches=2, barriers=2,
                           loop_trips=8, mfma_op="v_mfma_f32_16x16x32_bf16"),
    waves=32,
    sources=SourceSpec(files=("/work/example/kernels/gemm_bf16.py", "/work/example/lib/tile_ops.py"),
                       snapshots=True),
    agent_info=True,
    prefix="example",
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--force", action="store_true", help="replace the existing example")
    args = ap.parse_args()
    sources: dict[str, bytes] = {}
    if OUT.exists():
        if not args.force:
            print(f"{OUT} exists; pass --force to regenerate it", file=sys.stderr)
            return 3
        sources = {p.name: p.read_bytes() for p in OUT.glob("*/source_*_*")}
        shutil.rmtree(OUT)
    path = make_dispatch(OUT, SPEC, seed=7)
    for snap in sorted(path.glob("source_*_*")):
        if snap.name in sources:
            snap.write_bytes(sources[snap.name])
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
