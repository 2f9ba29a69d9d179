"""Files rocprofv3 writes beside a dispatch dir: agent info, kernel trace, rocpd db, results.json.

rocprofv3 puts them in the dispatch dir's parent, or (with the default `%hostname%/%pid%` naming)
in a `<hostname>/` subfolder of that parent. We look in the dir itself, its parent, and the parent's
immediate subfolders, nearest first.
"""

from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from pathlib import Path

from hotspot.capture.layout import WAVE_FILE_RE, is_dispatch_dir


def search_dirs(dispatch_dir: Path) -> list[Path]:
    return list(_search_dirs(dispatch_dir))


@lru_cache(maxsize=64)
def _search_dirs(dispatch_dir: Path) -> tuple[Path, ...]:
    parent = dispatch_dir.parent
    dirs = [dispatch_dir, parent]
    try:
        subs = sorted(p for p in parent.iterdir()
                      if p.is_dir() and p != dispatch_dir and not is_dispatch_dir(p))
    except OSError:
        subs = []
    # Prefer a companion folder named after the dispatch dir (e.g. `<dir>.meta`), then the rest.
    subs.sort(key=lambda p: (not p.name.startswith(dispatch_dir.name), p.name))
    return tuple(dirs + subs)


@lru_cache(maxsize=256)
def _file_names(folder: str) -> tuple[str, ...]:
    """Sorted plain-file names of a folder, wave files left out (cached: one listing serves every
    lookup of a run). No lookup asks for a wave file, and a dispatch dir holds tens of thousands."""
    try:
        with os.scandir(folder) as it:
            return tuple(sorted(e.name for e in it
                                if not WAVE_FILE_RE.match(e.name) and e.is_file()))
    except OSError:
        return ()


def nearby_files(dispatch_dir: Path, *patterns: str) -> list[Path]:
    """Files matching any glob pattern (case-insensitive), nearest directory first."""
    lowered = [pat.lower() for pat in patterns]
    out: list[Path] = []
    for folder in search_dirs(dispatch_dir):
        for name in _file_names(str(folder)):
            low = name.lower()
            if any(fnmatch.fnmatchcase(low, pat) for pat in lowered):
                out.append(folder / name)
    return out
