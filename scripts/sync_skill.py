#!/usr/bin/env python3
"""Copy the docs the skill ships (docs/plan-rules.md, docs/stall-taxonomy.md) into
skills/hotspot/references/. docs/ is the one source; tests/test_skill.py fails when the copies drift.

Run after editing either doc: python scripts/sync_skill.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DOCS = ("plan-rules.md", "stall-taxonomy.md")


def main() -> int:
    refs = ROOT / "skills" / "hotspot" / "references"
    for name in SHARED_DOCS:
        shutil.copyfile(ROOT / "docs" / name, refs / name)
        print(f"copied docs/{name} -> {refs.relative_to(ROOT)}/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
