#!/usr/bin/env python3
"""Drop-in replacement for the FlyDSL skill's pmc_l2_analyzer.py: same command line, hotspot's analysis.

    python pmc_l2_analyzer.py l2.csv ea.csv --kernel <k> --ideal-gb <GB per dispatch> --ea-channels 2

runs `hotspot pmc l2.csv ea.csv --kernel <k> --ideal-gb <GB>`. `--ea-channels` is accepted and
ignored: the `_sum` counters already cover every channel, so multiplying by a channel count
double-counts. hotspot also counts 128 B requests, reports achieved bandwidth per kernel, and
keeps kernels and dispatches apart.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

EA_CHANNELS_NOTE = ("pmc_l2_analyzer.py: --ea-channels {n} ignored: TCC_EA0_RDREQ*_sum counters are "
                    "already summed over all L2 channels, so no channel factor applies (the old "
                    "script's x{n} over-counted)\n")


def _hotspot_main():
    try:
        from hotspot.cli import main
    except ImportError:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # a source checkout
        try:
            from hotspot.cli import main
        except ImportError:
            sys.stderr.write("pmc_l2_analyzer.py: the hotspot package is not installed "
                             "(next: pip install . in a hotspot checkout, or run this script from one)\n")
            raise SystemExit(5)
    return main


def build_args(argv: list[str] | None = None) -> tuple[list[str], str | None]:
    p = argparse.ArgumentParser(prog="pmc_l2_analyzer.py",
                                description="Compatibility wrapper: runs `hotspot pmc`.")
    p.add_argument("csv", nargs="+", help="counter_collection CSVs (e.g. l2.csv ea.csv), joined by dispatch")
    p.add_argument("--kernel", help="kernel name substring")
    p.add_argument("--ideal-gb", type=float, help="GB (1e9 bytes) the kernel must read per dispatch")
    p.add_argument("--ea-channels", type=int, help="accepted for compatibility; not needed (see note)")
    p.add_argument("--arch", help="gfx target when the files do not say (gfx942, gfx950)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    a = p.parse_args(argv)
    out = ["pmc", *a.csv, "--format", a.format]
    if a.kernel:
        out += ["--kernel", re.escape(a.kernel)]
    if a.ideal_gb is not None:
        out += ["--ideal-gb", repr(a.ideal_gb)]
    if a.arch:
        out += ["--arch", a.arch]
    note = EA_CHANNELS_NOTE.format(n=a.ea_channels) if a.ea_channels is not None else None
    return out, note


def main(argv: list[str] | None = None) -> int:
    args, note = build_args(argv)
    if note:
        sys.stderr.write(note)
    sys.stderr.write("pmc_l2_analyzer.py: running `hotspot " + " ".join(args) + "`\n")
    return _hotspot_main()(args)


if __name__ == "__main__":
    raise SystemExit(main())
