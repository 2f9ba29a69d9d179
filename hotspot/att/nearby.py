"""Files rocprofv3 writes beside a dispatch dir: agent info, kernel trace, rocpd db, results.json.

rocprofv3 puts them in the dispatch dir's parent, or (with the default `%hostname%/%pid%` naming)
in a `<hostname>/` subfolder of that parent. We look in the dir itself, its parent, and the parent's
immediate subfolders, nearest first.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from hotspot.att.dispatch import is_dispatch_dir


def search_dirs(dispatch_dir: Path) -> list[Path]:
    parent = dispatch_dir.parent
    dirs = [dispatch_dir, parent]
    try:
        subs = sorted(p for p in parent.iterdir()
                      if p.is_dir() and p != dispatch_dir and not is_dispatch_dir(p))
    except OSError:
        subs = []
    # Prefer a companion folder named after the dispatch dir (e.g. `<dir>.meta`), then the rest.
    subs.sort(key=lambda p: (not p.name.startswith(dispatch_dir.name), p.name))
    return dirs + subs


def nearby_files(dispatch_dir: Path, *patterns: str) -> list[Path]:
    """Files matching any glob pattern (case-insensitive), nearest directory first."""
    out: list[Path] = []
    for folder in search_dirs(dispatch_dir):
        try:
            names = sorted(p for p in folder.iterdir() if p.is_file())
        except OSError:
            continue
        for p in names:
            low = p.name.lower()
            if any(fnmatch.fnmatchcase(low, pat.lower()) for pat in patterns):
                out.append(p)
    return out
