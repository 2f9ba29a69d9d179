#!/usr/bin/env python3
"""Drop-in replacement for the FlyDSL skill's hotspot_analyzer.py: same command lines, hotspot's analysis.

    python hotspot_analyzer.py <dispatch_dir> --topk 15 --mode both
    python hotspot_analyzer.py <dispatch_dir> --topk 5 --mode src --detail --context 4
    python hotspot_analyzer.py <dispatch_dir> --kernel <name substring>
    python hotspot_analyzer.py --dir <dispatch_dir> ...       (the original skill's form)

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
            checkout = Path(__file__).resolve().parent.parent
            sys.stderr.write(
                "hotspot_analyzer.py: the hotspot package is not installed and this script is not "
                "inside a hotspot checkout (next: install it with "
                f"`{Path(sys.executable).name} -m pip install <hotspot checkout>`, e.g. "
                f"`{Path(sys.executable).name} -m pip install {checkout}` if this script came from one)\n")
            raise SystemExit(5)
    return main


def build_args(argv: list[str] | None = None) -> list[str]:
    p = argparse.ArgumentParser(prog="hotspot_analyzer.py",
                                description="Compatibility wrapper: runs `hotspot analyze`.")
    # Both forms: `hotspot_analyzer.py DIR` and the original skill's `hotspot_analyzer.py --dir DIR`.
    p.add_argument("dispatch_dir", nargs="?", help="ui_output_agent_*_dispatch_* dir (or a folder holding several)")
    p.add_argument("--dir", dest="dir_option", metavar="DIR", help="the same dispatch dir, as an option")
    p.add_argument("--topk", type=int, default=15, help="rows per table (default 15)")
    p.add_argument("--mode", choices=("asm", "src", "both"), default="both")
    p.add_argument("--detail", action="store_true", help="source snippet and worst instructions per line")
    p.add_argument("--context", type=int, default=3, help="snippet lines around a hot line")
    p.add_argument("--kernel", help="kernel name substring (code.json may hold several kernels)")
    p.add_argument("--plan", action="store_true", help="add hotspot's optimization plan")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    a = p.parse_args(argv)
    if a.dispatch_dir and a.dir_option and a.dispatch_dir != a.dir_option:
        p.error(f"two dispatch dirs given ({a.dispatch_dir} and --dir {a.dir_option}): pass one")
    a.dispatch_dir = a.dispatch_dir or a.dir_option
    if not a.dispatch_dir:
        p.error("the dispatch dir is required (DIR or --dir DIR)")
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
