"""Files rocprofv3 writes beside a dispatch dir: agent info, kernel trace/stats, rocpd db,
results.json, code objects.

Where they are, by layout (nearest first):
- the dispatch dir itself, its parent (rocprofv3's output folder), and the parent's direct
  subfolders (the default `%hostname%/%pid%` naming puts them in `<hostname>/`; a companion folder
  named after the dispatch dir, e.g. `<dir>.meta`, comes first);
- up to MAX_ANCESTORS levels further up and those folders' direct subfolders: kernel-library repos
  keep the discovery CSVs beside the ATT tree, e.g. `<kernel>/att_viewer/big/ui_output_*/` with
  `<kernel>/compute_viewer/*.csv`;
- files or folders the user names with `--meta PATH` come before everything else.
The climb stops below a folder unrelated work shares (`shared_folder`: the filesystem root, the
home folder, any folder other users may write such as /tmp): what lies there or beside it belongs to
no run in particular, so a capture in /tmp/x never reads /tmp/y's databases.
Adding a side file is one entry in SIDE_FILES (and a reader, if the file type is new); adding a
place to look is a level of `_search_dirs`.
"""

from __future__ import annotations

import fnmatch
import importlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hotspot.arch.resources import COUNTER_COLLECTION, KERNEL_TRACE, ROCPD
from hotspot.cache.deps import DIRS, DIRS_FOLLOWED, FILES, listed, note
from hotspot.capture.layout import DISPATCH_DIR_RE, folder_names, is_dispatch_dir
from hotspot.capture.session import memoized
from hotspot.record import record

# How far up from the dispatch dir side files are looked for (what each level is: the module doc).
MAX_ANCESTORS = 3
# Direct subfolders listed per ancestor: a capture under a huge folder must not scan all of it.
MAX_SUBFOLDERS = 256

# What a side file tells: the GPU agents of the run (the arch), or the kernel's dispatch rows
# (registers, LDS, grid: occupancy and the launch).
AGENTS = "agents"
DISPATCHES = "dispatches"


@record
class SideFile:
    """One kind of side file: the names it has (case-insensitive globs), what it tells (`fact`),
    its reader (`module:function`, imported when such a file is found: most captures have none,
    and the rocpd readers load sqlite3), and its rank among the files telling the same fact
    (1 = most trusted)."""

    kind: str
    globs: tuple[str, ...]
    fact: str
    reader: str
    rank: int

    def read(self, path: Path) -> Any:
        """The file's parse, once per file and command (callers only read it): both sides of a
        diff search the same folders, and a kernel trace CSV costs ~4 ms per 100 KB."""
        module, name = self.reader.split(":")
        return memoized(f"side-file {self.reader}", str(path),
                        lambda: getattr(importlib.import_module(module), name)(path))


# GPU architecture (rocprofv3 --sys-info), FORMATS.md §3: [(gfx name, product name)]; also read
# beside counter files (capture/counters/discover.py)
AGENT_INFO = SideFile("agent_info", ("*agent_info.csv", "*agent-info.csv"), AGENTS,
                      "hotspot.capture.agents:read_agents_csv", 1)
# Every side file any reader looks for. A search lists only names that match one of these globs,
# and the result cache depends on those names only (hotspot/cache/deps.py), so unrelated files
# coming and going in a searched folder ($HOME, /tmp) change nothing.
SIDE_FILES: tuple[SideFile, ...] = (
    AGENT_INFO,
    SideFile("rocpd", ("*results.db",), AGENTS, "hotspot.capture.agents:read_agents_rocpd", 2),
    SideFile("results.json", ("*results.json",), AGENTS,
             "hotspot.capture.agents:read_agents_results_json", 3),
    # code objects: the arch from the file name alone (capture/target.py CODE_OBJECT_RE)
    SideFile("code object", ("*_code_object_id_*.out",), AGENTS,
             "hotspot.capture.target:code_object_agents", 4),
    # the kernel's dispatches (resources, launch): [DispatchRecord]
    SideFile(ROCPD, ("*results.db",), DISPATCHES,
             "hotspot.capture.trace.rocpd:read_rocpd_dispatches", 1),
    SideFile(KERNEL_TRACE, ("*kernel_trace.csv",), DISPATCHES,
             "hotspot.capture.trace.kernel_trace:read_kernel_trace_csv", 2),
    SideFile(COUNTER_COLLECTION, ("*counter_collection.csv",), DISPATCHES,
             "hotspot.capture.trace.kernel_trace:read_kernel_trace_csv", 3),
)
SIDE_FILE_PATTERNS: tuple[str, ...] = tuple(dict.fromkeys(g for s in SIDE_FILES for g in s.globs))


def side_files(fact: str) -> list[SideFile]:
    """The kinds of side file that tell `fact`, most trusted first."""
    return sorted((s for s in SIDE_FILES if s.fact == fact), key=lambda s: s.rank)


# A folder holds dispatch dirs when it has subfolders with these names (checked by the regex after)
DISPATCH_DIR_GLOB = ("ui_output_agent_*_dispatch_*",)


def check_meta(meta: Sequence[Path]) -> None:
    """Every `--meta` path exists and is a regular file or a folder: a typo, a device or a FIFO is
    refused naming it (exit 3), never silently ignored or read."""
    import stat

    from hotspot.errors import bad_file

    for m in meta:
        try:
            st = os.stat(m)
        except FileNotFoundError:
            raise bad_file(m, "--meta names no such file or folder", "check the path",
                           code="bad-input") from None
        except OSError as exc:
            raise bad_file(m, f"--meta cannot be read ({exc.strerror or exc})", "check the path",
                           code="io-error") from None
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise bad_file(m, "--meta names a device, FIFO or socket, not a side file or folder",
                           "pass an agent_info CSV, kernel trace/stats CSV, rocpd db or results.json, "
                           "or a folder of them", code="not-a-file")


def search_dirs(dispatch_dir: Path, meta: Sequence[Path] = ()) -> list[Path]:
    """Folders searched for side files, nearest first (explicit --meta folders first)."""
    explicit = [Path(m) for m in meta if Path(m).is_dir()]
    return explicit + [d for d in memoized("search-dirs", str(dispatch_dir),
                                           lambda: _search_dirs(dispatch_dir)) if d not in explicit]


def _subfolders(folder: Path, skip: set[Path], other_captures: bool) -> list[Path]:
    """Direct subfolders of `folder`; with other_captures=False, folders that hold dispatch dirs of
    their own (another capture's run folder, whose side files describe another run) are left out."""
    subs = [folder / name for name in listed(str(folder), ("*",), DIRS)]
    candidates = [p for p in subs[:MAX_SUBFOLDERS] if p not in skip]
    note(str(p / "code.json") for p in candidates)  # is_dispatch_dir probes it by name
    return [p for p in candidates if not is_dispatch_dir(p)
            and (other_captures or not _holds_dispatch_dirs(p))]


def _holds_dispatch_dirs(folder: Path) -> bool:
    return any(DISPATCH_DIR_RE.match(n) for n in listed(str(folder), DISPATCH_DIR_GLOB, DIRS_FOLLOWED))


def shared_folder(folder: Path) -> bool:
    """A folder unrelated work shares: the filesystem root, the user's home folder, or one that
    other users may write (/tmp, /var/tmp, /dev/shm: world-writable). Side files there or in its
    other subfolders belong to no run in particular."""
    if folder.parent == folder:
        return True
    try:
        if folder == Path.home().resolve():
            return True
    except (RuntimeError, OSError):  # no home folder known
        pass
    try:
        return bool(os.stat(folder).st_mode & stat.S_IWOTH)
    except OSError:
        return True  # unreadable: nothing to search there either


def _search_dirs(dispatch_dir: Path) -> tuple[Path, ...]:
    out: list[Path] = [dispatch_dir]
    seen: set[Path] = {dispatch_dir}
    child = dispatch_dir
    for level, ancestor in zip(range(1, MAX_ANCESTORS + 1), dispatch_dir.resolve().parents):
        if shared_folder(ancestor):
            break
        out.append(ancestor)
        seen.add(ancestor)
        # rocprofv3's own output folder (level 1) may hold several dispatch dirs of this run; further
        # up, a folder with dispatch dirs of its own is another capture
        subs = _subfolders(ancestor, seen | {child}, other_captures=level == 1)
        # a companion folder named after the dispatch dir (e.g. `<dir>.meta`) first, then the rest
        subs.sort(key=lambda p: (not p.name.startswith(dispatch_dir.name), p.name))
        out.extend(subs)
        seen.update(subs)
        child = ancestor
    return tuple(out)


def _file_names(folder: str) -> tuple[str, ...]:
    """Sorted names of the side files in a folder (names matching SIDE_FILE_PATTERNS; one listing
    per session: a dispatch folder's, one file per wave, is the one its opening made)."""
    return memoized("listing", folder, lambda: tuple(listed(folder, SIDE_FILE_PATTERNS, FILES,
                                                            folder_names(folder))))


def nearby_files(dispatch_dir: Path, side: SideFile, meta: Sequence[Path] = ()) -> list[Path]:
    """Files of one kind (its globs, case-insensitive): --meta files first, then nearest folder
    first."""
    lowered = [pat.lower() for pat in side.globs]

    def matches(name: str) -> bool:
        low = name.lower()
        return any(fnmatch.fnmatchcase(low, pat) for pat in lowered)

    out = [Path(m) for m in meta if Path(m).is_file() and matches(Path(m).name)]
    for folder in search_dirs(dispatch_dir, meta):
        for name in _file_names(str(folder)):
            if matches(name):
                path = folder / name
                if path not in out:
                    out.append(path)
    return out


def same_run(dispatch_dir: Path, side_file: Path) -> bool:
    """True when the side file comes from the same rocprofv3 run as the dispatch dir (its output
    folder or a subfolder of it): only then do its dispatch ids name the same dispatches."""
    run = dispatch_dir.resolve().parent
    try:
        side_file.resolve().relative_to(run)
        return True
    except ValueError:
        return False
