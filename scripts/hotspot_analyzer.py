#!/usr/bin/env python3
"""Drop-in replacement for the FlyDSL skill's hotspot_analyzer.py: same command lines, hotspot's analysis.

    python hotspot_analyzer.py <dispatch_dir> --topk 15 --mode both
    python hotspot_analyzer.py <dispatch_dir> --topk 5 --mode src --detail --context 4
    python hotspot_analyzer.py <dispatch_dir> --kernel <name substring>

runs `hotspot analyze` (the old --kernel is a name substring; hotspot's is a regex, so it is escaped).
Extra: --plan adds the optimization plan, --format json|markdown changes the output.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path


def _hotspot_main():
    try:
        from hotspot.cli import main
    except ImportError:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # a source checkout
        try:
            from hotspot.cli import main
        except ImportError:
            sys.stderr.write("hotspot_analyzer.py: the hotspot package is not installed "
                             "(next: pip install . in a hotspot checkout, or run this script from one)\n")
            raise SystemExit(5)
    return main


def build_args(argv: list[str] | None = None) -> list[str]:
    p = argparse.ArgumentParser(prog="hotspot_analyzer.py",
                                description="Compatibility wrapper: runs `hotspot analyze`.")
    p.add_argument("dispatch_dir", help="ui_output_agent_*_dispatch_* dir (or a folder holding several)")
    p.add_argument("--topk", type=int, default=15, help="rows per table (default 15)")
    p.add_argument("--mode", choices=("asm", "src", "both"), default="both")
    p.add_argument("--detail", action="store_true", help="source snippet and worst instructions per line")
    p.add_argument("--context", type=int, default=3, help="snippet lines around a hot line")
    p.add_argument("--kernel", help="kernel name substring (code.json may hold several kernels)")
    p.add_argument("--plan", action="store_true", help="add hotspot's optimization plan")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    a = p.parse_args(argv)
    out = ["analyze", a.dispatch_dir, "--topk", str(a.topk), "--mode", a.mode,
           "--context", str(a.context), "--format", a.format]
    if a.detail:
        out.append("--detail")
    if a.kernel:
        out += ["--kernel", re.escape(a.kernel)]
    if a.plan:
        out.append("--plan")
    return out


def main(argv: list[str] | None = None) -> int:
    args = build_args(argv)
    sys.stderr.write("hotspot_analyzer.py: running `hotspot " + " ".join(args) + "`\n")
    return _hotspot_main()(args)


if __name__ == "__main__":
    raise SystemExit(main())
