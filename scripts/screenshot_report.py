#!/usr/bin/env python3
"""PNG screenshot of the HTML report of one dispatch dir, taken in headless Chromium (for docs).

    .venv/bin/python scripts/screenshot_report.py ../shared/corpus/att/gfx950/preshuffle_gemm_v2 \\
        -o docs/img/report.png [--width 1400] [--max-height 4000] [--select-source] [--keep-html F]

Writes the report to a temporary file (or --keep-html), opens it from file:// in Chromium
(the Debian `chromium` package, or $HOTSPOT_CHROMIUM), waits until the ISA table is built, optionally
clicks the hottest source line so its instructions show, and captures the page from the top.
Exits 1 with a message if the page logged an error or fetched anything but itself.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hotspot.errors import HotspotError  # noqa: E402
from tests.chromium import Browser, BrowserError  # noqa: E402
from hotspot.export.report_data import report_data  # noqa: E402
from hotspot.render.html import render_html  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="ATT dispatch dir (or saved hotspot analyze --format json file)")
    ap.add_argument("-o", "--output", default="report.png", help="PNG to write (default report.png)")
    ap.add_argument("--width", type=int, default=1400, help="viewport width in px")
    ap.add_argument("--max-height", type=int, default=4000, help="capture at most this many px "
                    "from the top (0 = the whole page)")
    ap.add_argument("--select-source", action="store_true", help="open the hottest source line first")
    ap.add_argument("--keep-html", help="also keep the HTML report at this path")
    args = ap.parse_args(argv)
    try:
        page_html = render_html(report_data(Path(args.dir)))
    except HotspotError as err:
        print(f"screenshot_report: {err.message}", file=sys.stderr)
        return err.exit_code
    with tempfile.TemporaryDirectory(prefix="hotspot-shot-") as tmp:
        html_path = Path(args.keep_html) if args.keep_html else Path(tmp) / "report.html"
        html_path.write_text(page_html, encoding="utf-8")
        try:
            with Browser(window=(args.width, 1000)) as browser:
                page = browser.open(html_path.resolve().as_uri())
                page.wait_for("document.querySelector('section.dispatch') && "
                              "document.querySelector('section.dispatch').hasAttribute('data-isa-rendered')")
                if args.select_source:
                    page.evaluate("(function(){var r=document.querySelector('tr.src-row');"
                                  "if(r) r.click(); return !!r;})()")
                size = page.screenshot(Path(args.output), width=args.width,
                                       max_height=args.max_height or None)
                log = page.log
                foreign = [u for u in log.requests if not u.startswith(html_path.resolve().as_uri())]
                if log.errors or foreign or log.dialogs:
                    print("screenshot_report: the page misbehaved: "
                          f"errors={log.errors} requests={foreign} dialogs={log.dialogs}", file=sys.stderr)
                    return 1
        except BrowserError as err:
            print(f"screenshot_report: {err}", file=sys.stderr)
            return 5
    print(f"wrote {args.output} ({size / 1024:,.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
