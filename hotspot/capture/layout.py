"""Locating and opening ATT ui_output dispatch directories."""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from hotspot.capture.files import load_json
from hotspot.capture.session import memoized, share, shared
from hotspot.errors import InputError, bad_file
from hotspot.result import JsonObject
from hotspot.record import record

DISPATCH_DIR_RE = re.compile(r"^ui_output_agent_(\d+)_dispatch_(\d+)$")
WAVE_FILE_RE = re.compile(r"^se(\d+)_sm(\d+)_sl(\d+)_wv(\d+)\.json$")
# Agent handles and dispatch ids are unsigned 64-bit values in rocprofv3's output.
ID_LIMIT = 1 << 64
# How deep below a given folder to look for dispatch dirs (run dir / pass_N / hostname / ...).
SEARCH_DEPTH = 3


class WaveFile:
    """One wave file of a dispatch dir. A slotted class holding its path as a string: a 1 GB
    capture lists ~50,000 of them, and a pathlib.Path each costs time and memory (`path` makes
    one on demand)."""

    __slots__ = ("where", "se", "simd", "slot", "n", "begin", "end")

    def __init__(self, path: str | os.PathLike[str], se: int, simd: int, slot: int, n: int,
                 begin: int | None = None, end: int | None = None) -> None:
        self.where = os.fspath(path)
        self.se, self.simd, self.slot, self.n = se, simd, slot, n
        self.begin, self.end = begin, end

    @property
    def path(self) -> Path:
        return Path(self.where)

    def _key(self) -> tuple[str, int, int, int, int, int | None, int | None]:
        return (self.where, self.se, self.simd, self.slot, self.n, self.begin, self.end)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WaveFile) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"WaveFile({self.where!r}, se={self.se}, simd={self.simd}, slot={self.slot}, "
                f"n={self.n})")


# One listed wave file: (se, simd, slot, n, listing order, begin, end, file name)
WaveRow = tuple[int, int, int, int, int, int, int, str]


class WaveFiles(Sequence[WaveFile]):
    """The wave files filenames.json lists, as one tuple each under the folder's path, sorted by
    (se, simd, slot, n) and then listing order; each WaveFile is made when it is asked for. A 1 GB
    capture lists ~50,000 files: the fresh analysis of a 2,000-wave capture spent ~1 ms making an
    object per file that only the wave pass's descriptors (`described`) were taken from."""

    __slots__ = ("prefix", "rows")

    def __init__(self, prefix: str, rows: list[WaveRow]) -> None:
        self.prefix = prefix  # the folder's path and a separator
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> WaveFile: ...

    @overload
    def __getitem__(self, index: slice) -> WaveFiles: ...

    def __getitem__(self, index: int | slice) -> WaveFile | WaveFiles:
        if isinstance(index, slice):
            return WaveFiles(self.prefix, self.rows[index])
        se, simd, slot, n, _, begin, end, name = self.rows[index]
        return WaveFile(self.prefix + name, se, simd, slot, n, begin, end)

    def __iter__(self) -> Iterator[WaveFile]:
        prefix = self.prefix
        for se, simd, slot, n, _, begin, end, name in self.rows:
            yield WaveFile(prefix + name, se, simd, slot, n, begin, end)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WaveFiles):
            return self.prefix == other.prefix and self.rows == other.rows
        return isinstance(other, (tuple, list)) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]  # a sequence compared by value, as a list

    def __repr__(self) -> str:
        return f"WaveFiles({self.prefix!r}, {len(self.rows)} files)"

    def described(self) -> list[tuple[str, int, int, int, int]]:
        """(path, se, simd, slot, n) of each file, in order: the wave pass's descriptors."""
        prefix = self.prefix
        return [(prefix + r[7], r[0], r[1], r[2], r[3]) for r in self.rows]


@record
class DispatchDir:
    path: Path
    agent_handle: int | None
    dispatch_id: int | None
    pc_sampling: bool
    wave_files: Sequence[WaveFile]  # WaveFiles when filenames.json lists them, else a tuple
    filenames_doc: JsonObject
    warnings: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.path.name


def parse_dir_name(name: str) -> tuple[int | None, int | None]:
    """(agent handle, dispatch id) of a dispatch dir's name; ids a profiler cannot write (2**64
    and above) are refused naming the folder."""
    m = DISPATCH_DIR_RE.match(name)
    if not m:
        return (None, None)
    handle, dispatch = int(m.group(1)), int(m.group(2))
    for field, value in (("agent handle", handle), ("dispatch id", dispatch)):
        if value >= ID_LIMIT:
            raise bad_file(name, f"the folder name's {field} {value} is beyond a 64-bit id "
                           "(no profiler writes it)", "rename the folder as rocprofv3 wrote it",
                           code="bad-value")
    return (handle, dispatch)


def is_dispatch_dir(path: Path) -> bool:
    """A folder holding a code.json entry. The entry is not opened here: a code.json that is a
    FIFO, a device or a bad link is then refused by its reader, naming it, instead of the folder
    being skipped as "no dispatch directory"."""
    try:
        return path.is_dir() and os.path.lexists(path / "code.json") and \
            not (path / "code.json").is_dir()
    except OSError:
        return False


def list_folder(path: Path) -> list[str]:
    """The names in a capture folder; an unreadable folder is bad input naming it."""
    try:
        return os.listdir(path)
    except PermissionError:
        raise bad_file(path, "permission denied listing the folder",
                       "make it readable (chmod u+rx) or run as its owner", code="permission-denied")
    except OSError as exc:
        raise bad_file(path, f"cannot list the folder ({exc.strerror or exc})", code="io-error")


def find_dispatch_dirs(root: Path) -> list[Path]:
    """`root` itself when it is a dispatch dir, else every dispatch dir below it (sorted)."""
    if not root.exists():
        raise InputError(f"{root}: no such file or directory",
                         "pass an ATT ui_output_agent_*_dispatch_* directory or a rocprofv3 output "
                         "directory that holds them")
    if not root.is_dir():
        raise InputError(f"{root}: not a directory",
                         "pass an ATT ui_output_agent_*_dispatch_* directory")
    if is_dispatch_dir(root):
        return [root]
    list_folder(root)  # an unreadable folder is named as such, not as "no dispatch dir found"
    found: list[Path] = []
    frontier = [root]
    for _ in range(SEARCH_DEPTH):
        nxt: list[Path] = []
        for folder in frontier:
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir())
            except OSError:
                continue
            for child in children:
                (found if is_dispatch_dir(child) else nxt).append(child)
        frontier = nxt
    return sorted(found, key=_dir_sort_key)


def require_dispatch_dirs(root: Path) -> list[Path]:
    """find_dispatch_dirs, failing with the usual message when there is none."""
    dirs = find_dispatch_dirs(root)
    if not dirs:
        raise InputError(f"{root}: no ATT dispatch directory (ui_output_agent_*_dispatch_* with a "
                         f"code.json) found here or up to {SEARCH_DEPTH} folder levels below",
                         "pass the ui_output dir itself, or a folder at most "
                         f"{SEARCH_DEPTH} levels above it, such as the rocprofv3 output directory")
    return dirs


def _dir_sort_key(path: Path) -> tuple[object, ...]:
    handle, dispatch = parse_dir_name(path.name)
    return (str(path.parent), dispatch if dispatch is not None else -1, path.name)


def open_dispatch(path: Path) -> DispatchDir:
    """The dispatch dir's listing and filenames.json (read once per capture session)."""
    return memoized("dispatch", str(path), lambda: _open_dispatch(path))


def _open_dispatch(path: Path) -> DispatchDir:
    if not path.exists():
        raise InputError(f"{path}: no such file or directory",
                         "pass an ATT ui_output_agent_*_dispatch_* directory")
    if not is_dispatch_dir(path):
        raise InputError(f"{path}: no code.json here, not an ATT ui_output dispatch directory",
                         "pass a ui_output_agent_*_dispatch_* directory written by rocprofv3 --att")
    handle, dispatch = parse_dir_name(path.name)
    warnings: list[str] = []
    fn_path = path / "filenames.json"
    doc: JsonObject = {}
    if os.path.lexists(fn_path):
        loaded = load_json(fn_path)
        if not isinstance(loaded, dict):
            raise bad_file(fn_path, "top level is not a JSON object")
        doc = loaded
    else:
        warnings.append(f"{fn_path}: missing; wave files found by name instead")
    version = doc.get("version")
    if isinstance(version, str):
        from hotspot.capture.codejson import version_warning

        warning = version_warning(fn_path, version, "'wave_filenames' as [file, begin, end] per "
                                  "wave, 'gfxip' and 'pc_sampling', and the wave files' 'begin', "
                                  "'end', 'instructions' [time, category, stall, duration, line], "
                                  "'timeline' [state, cycles] and 'waitcnt'")
        if warning:
            warnings.append(warning)
    pc_sampling = bool(doc.get("pc_sampling"))
    scan = _FolderScan(path)
    waves = _distinct_waves(path, _wave_files(path, fn_path, doc, warnings, scan), warnings, scan)
    # the wave listing now lives in `waves`; keeping its ~50k-entry dict too would double it
    rest = {k: v for k, v in doc.items() if k != "wave_filenames"}
    return DispatchDir(path, handle, dispatch, pc_sampling,
                       waves if isinstance(waves, WaveFiles) else tuple(waves), rest, tuple(warnings))


class _FolderScan:
    """One scan of a dispatch folder, shared by the wave listing (the names) and the identity of
    its files (`_distinct_waves`): the folder, which holds one file per wave, is read once. The
    scan runs on first use; an error is kept and raised to each user, who handles it as before."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._identity: dict[str, tuple[int, int] | str] | None = None
        self._error: OSError | None = None
        # no symlink in the folder and no two names for one inode: distinct names, distinct files
        self.plain = False

    def identity(self) -> dict[str, tuple[int, int] | str]:
        """Name -> (device or 0 for the folder's, inode), or the name for a broken or looping
        link (its reader names the problem later); OSError when the folder cannot be listed."""
        if self._error is not None:
            raise self._error
        if self._identity is None:
            identity: dict[str, tuple[int, int] | str] = {}
            links = False
            try:
                with os.scandir(self.path) as it:
                    for entry in it:
                        try:
                            if entry.is_symlink():
                                links = True
                                st = os.stat(entry.path)
                                identity[entry.name] = (st.st_dev, st.st_ino)
                            else:
                                identity[entry.name] = (0, entry.inode())
                        except OSError:
                            identity[entry.name] = entry.name
            except OSError as exc:
                self._error = exc
                raise
            self._identity = identity
            self.plain = not links and len(set(identity.values())) == len(identity)
            # the side-file search lists this folder too (hotspot/capture/sidefiles.py): it takes
            # these names (its own dependency is the names it matches, not the folder's mtime)
            share(FOLDER_NAMES, str(self.path), identity)
        return self._identity

    def names(self) -> dict[str, tuple[int, int] | str]:
        """The folder's names (for `in`); an unreadable folder is bad input naming it, as
        `list_folder` says it."""
        try:
            return self.identity()
        except PermissionError:
            raise bad_file(self.path, "permission denied listing the folder",
                           "make it readable (chmod u+rx) or run as its owner",
                           code="permission-denied")
        except OSError as exc:
            raise bad_file(self.path, f"cannot list the folder ({exc.strerror or exc})",
                           code="io-error")


# The session's slot for a dispatch folder's names, listed when it was opened (`folder_names`).
FOLDER_NAMES = "folder names"


def folder_names(folder: str) -> Iterable[str] | None:
    """The names in `folder` as this command's opening of it listed them; None when it has not."""
    got = shared(FOLDER_NAMES, folder)
    return got if isinstance(got, dict) else None


def _distinct_waves(path: Path, waves: Sequence[WaveFile], warnings: list[str],
                    scan: _FolderScan | None = None) -> Sequence[WaveFile]:
    """Each wave file once: a name listed several times in filenames.json, or several names that
    are one file (symlinks, hard links), is one wave, not several. Identity is the file's inode,
    read from one scan of the folder (a stat only for symlinks, which are rare)."""
    scan = scan or _FolderScan(path)
    try:
        identity = scan.identity()
    except OSError:
        return waves
    if scan.plain and len({r[7] for r in waves.rows} if isinstance(waves, WaveFiles)
                          else {wf.where for wf in waves}) == len(waves):
        return waves  # each name once, each name its own file: nothing repeats
    dev = 0
    try:
        dev = os.stat(path).st_dev
    except OSError:
        pass
    seen: set[object] = set()
    out: list[WaveFile] = []
    repeated = 0
    for wf in waves:
        name = wf.where.rpartition(os.sep)[2]  # os.path.basename, without its checks
        key = identity.get(name, wf.where)
        if isinstance(key, tuple) and key[0] == 0:
            key = (dev, key[1])
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        out.append(wf)
    if repeated:
        warnings.append(f"{path}: {repeated} wave file name(s) repeat a file already counted (a name "
                        "listed twice in filenames.json, a symlink or a hard link); each file is "
                        "counted once")
    return out


def _wave_files(path: Path, fn_path: Path, doc: JsonObject, warnings: list[str],
                scan: _FolderScan | None = None) -> Sequence[WaveFile]:
    listing: Any = doc.get("wave_filenames")  # walked as it is: a wrong shape is caught below
    if isinstance(listing, dict):
        missing = 0
        # one listing instead of a stat per wave file
        present = (scan or _FolderScan(path)).names()
        folder = os.fspath(path)
        # os.path.join for the names the listing holds (no separator in them), without its checks
        prefix = folder if folder.endswith(os.sep) else folder + os.sep
        # (se, simd, slot, n, listing order, ...): sorted as tuples of ints, the order WaveFiles
        # sorted by (se, simd, slot, n) had (the listing order, unique, breaks every tie)
        rows: list[WaveRow] = []
        try:
            for se, simds in listing.items():
                for simd, slots in simds.items():
                    for slot, waves in slots.items():
                        entries = waves.items()
                        if not entries:
                            continue
                        # once per slot: a bad key of an empty slot is not looked at, as before
                        ise, isimd, islot = int(se), int(simd), int(slot)
                        for n, entry in entries:
                            name, begin, end = entry[0], entry[1], entry[2]
                            i_n, ibegin, iend = int(n), int(begin), int(end)
                            if name in present:
                                rows.append((ise, isimd, islot, i_n, len(rows), ibegin, iend, name))
                            else:
                                os.path.join(folder, name)  # a name of another type: refused
                                missing += 1
        except (AttributeError, TypeError, ValueError, IndexError, KeyError):
            raise bad_file(fn_path, "field 'wave_filenames' is not the expected "
                           "{se: {simd: {slot: {n: [file, begin, end]}}}} mapping")
        if missing:
            warnings.append(f"{fn_path}: {missing} listed wave file(s) are missing")
        rows.sort()
        return WaveFiles(prefix, rows)
    if listing is not None:
        raise bad_file(fn_path, "field 'wave_filenames' is not an object")
    found = []
    for name in (scan or _FolderScan(path)).names():  # the scan `_distinct_waves` reads too
        m = WAVE_FILE_RE.match(name)
        if m:
            ise, isimd, islot, i_n = (int(g) for g in m.groups())
            found.append(WaveFile(path / name, ise, isimd, islot, i_n))
    return sorted(found, key=lambda w: (w.se, w.simd, w.slot, w.n))
