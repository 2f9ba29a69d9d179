"""What a computation read, and whether any of it changed since.

`recording()` collects, through one Python audit hook, every file opened for reading, every folder
listed (os.listdir/os.scandir, which pathlib and glob use) and every sqlite database connected to,
in any thread of this process; reads done for it by other processes, or memoized earlier in the
process, are added with `note()`. Each becomes a dependency on the path's stat signature (size,
mtime, ctime, inode, device; "absent" for a path that did not exist): a listed folder's mtime
changes when an entry is added, removed or renamed in it.

A search that looks for a few names in many folders (side files: hotspot/capture/sidefiles.py)
lists them with `listed()` instead: the dependency is then the digest of the names that matched,
so files coming and going in a busy folder ($HOME, /tmp) that the search would not pick up do not
invalidate anything.
"""

from __future__ import annotations

import os
import sys
from _thread import get_ident
from contextvars import ContextVar
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms)
if TYPE_CHECKING:  # annotations only: this module is on the launcher's hit path, kept light
    from collections.abc import Iterable
    from typing import Any

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

# (size, mtime_ns, ctime_ns, inode, device), or None for a path that does not exist
Signature = tuple[int, int, int, int, int] | None
# A listing dependency: (folder, globs, mode, digest of the sorted matching names)
Listing = tuple[str, tuple[str, ...], str, bytes]
# A file changed within this long of the computation's start may have changed while it was read
# (or inside a coarse file-system timestamp): results from it are not stored ("racy" files, as git
# calls them).
RACY_NS = 2_000_000_000
# listed() modes: which entries a listing keeps
FILES, DIRS, DIRS_FOLLOWED = "files", "dirs", "dirs-followed"


_active: list[set[object]] = []
_written: list[list[str]] = []  # active writes_recorded() lists: files renamed into place
_hooked = {"on": False}
_quiet: set[int] = set()  # threads inside unrecorded() (plain classes: this module loads fast)


class _Collecting:
    """A collector pushed on `stack` for the duration of a `with` block (by identity: two
    collectors holding equal items are still two)."""

    stack: list[Any]
    make: type

    def __enter__(self) -> Any:  # the subclass's collection
        if not _hooked["on"]:
            _hooked["on"] = True
            sys.addaudithook(_on_audit)
        self.items = self.make()
        self.stack.append(self.items)
        return self.items

    def __exit__(self, *exc: object) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] is self.items:
                del self.stack[i]
                break


class recording(_Collecting):  # noqa: N801 - used as a function: `with recording() as read:`
    """Within the block, what is read is added to the yielded set: absolute paths (str) and
    Listing tuples. Nested recordings each see everything read inside them."""

    stack, make = _active, set


class writes_recorded(_Collecting):  # noqa: N801
    """Within the block, the destination of every os.rename/os.replace (how hotspot writes a
    report or a trace: a temporary file renamed into place) is added to the yielded list."""

    stack, make = _written, list


class unrecorded:  # noqa: N801
    """Reads of this thread inside the block are not dependencies (the cache reading its own
    entries, a listing recorded as a Listing)."""

    def __enter__(self) -> None:
        self.ident = get_ident()
        self.outer = self.ident in _quiet
        _quiet.add(self.ident)

    def __exit__(self, *exc: object) -> None:
        if not self.outer:
            _quiet.discard(self.ident)


def note(items: Iterable[object]) -> None:
    """Add paths (or Listings) read on this process's behalf: by pool workers, or memoized."""
    if _active:
        sep = os.sep
        add = [os.path.abspath(i) if isinstance(i, str) and not i.startswith(sep) else i
               for i in items]  # entries hold absolute, normalized paths already
        for rec in _active:
            rec.update(add)


def _on_audit(event: str, args: tuple[Any, ...]) -> None:
    if _written and event == "os.rename" and len(args) > 1 and isinstance(args[1], (str, bytes)) \
            and not (_quiet and get_ident() in _quiet):  # the cache's own entries are not outputs
        for out in _written:
            out.append(os.path.abspath(os.fsdecode(args[1])))
    if not _active or not args or (_quiet and get_ident() in _quiet):
        return
    try:
        path = _path_of(event, args)
        if path is not None:
            if type(path) is not str:
                path = os.fsdecode(path)
            if not path.startswith(os.sep):  # the wave pass opens ~50,000 absolute paths
                path = os.path.abspath(path)
            for rec in _active:
                rec.add(path)
    except Exception:  # noqa: BLE001 - a hook that raises would make the open itself fail
        pass


def _path_of(event: str, args: tuple[Any, ...]) -> Any:
    if event == "open":
        path = args[0]
        if isinstance(path, int):
            return None
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        if mode is None:
            if (flags or 0) & os.O_ACCMODE == os.O_WRONLY:
                return None
            if (flags or 0) & (os.O_CREAT | os.O_EXCL) == os.O_CREAT | os.O_EXCL:
                return None  # a file being created (a temporary output), not an input
        elif not ("r" in mode or "+" in mode):
            return None
        return path
    if event == "os.listdir" or event == "os.scandir":
        path = args[0]
        if path is None:
            return "."
        return None if isinstance(path, int) else path
    if event == "sqlite3.connect":
        path = args[0]
        if isinstance(path, str) and path.startswith("file:"):  # a read-only URI of ours
            from urllib.parse import unquote

            return unquote(path[5:].split("?", 1)[0])
        return path if path != ":memory:" else None
    return None


def listed(folder: str, globs: tuple[str, ...], mode: str,
           names: Iterable[str] | None = None) -> list[str]:
    """Sorted names in `folder` that match one of `globs` (case-insensitive; `*` is the only
    wildcard) and are regular files (or links to them: FILES), folders (DIRS) or folders or links
    to them (DIRS_FOLLOWED); [] when the folder cannot be listed. Recorded as a Listing, not as the
    folder's mtime. `names`: the folder's names when this command has listed it already (a
    dispatch folder, one file per wave: hotspot/capture/layout.py), else it is listed here."""
    globs = tuple(g.lower() for g in globs)
    names = _matching(folder, globs, mode) if names is None else _matching_names(folder, names, globs, mode)
    if _active:
        dep = (os.path.abspath(folder), globs, mode, _digest(names))
        for rec in _active:
            rec.add(dep)
    return names


def glob_match(name: str, glob: str) -> bool:
    """fnmatch for globs whose only wildcard is `*` (no regex: the launcher does not load `re`)."""
    parts = glob.split("*")
    if len(parts) == 1:
        return name == glob
    head, tail = parts[0], parts[-1]
    if len(name) < len(head) + len(tail) or not name.startswith(head) or not name.endswith(tail):
        return False
    pos, end = len(head), len(name) - len(tail)
    for mid in parts[1:-1]:
        i = name.find(mid, pos, end)
        if i < 0:
            return False
        pos = i + len(mid)
    return True


def _candidates(names: Iterable[str], globs: tuple[str, ...]) -> list[str]:
    """The names that start with one of the globs' heads and end with one of their tails (each ""
    when some glob starts or ends with `*`), tested inline, not in a call per name: most names of a
    big folder (one file per wave, or the user's cache folder when dispatch dirs are looked for)
    stop here. A candidate still has to match a glob whole (`_matches`)."""
    heads = tuple(g.split("*", 1)[0] for g in globs)
    tails = tuple(g.rsplit("*", 1)[-1] for g in globs)
    return [n for n in names if (low := n.lower()).startswith(heads) and low.endswith(tails)]


def _matches(name: str, globs: tuple[str, ...]) -> bool:
    low = name.lower()
    return any(glob_match(low, g) for g in globs)


def _matching_names(folder: str, names: Iterable[str], globs: tuple[str, ...], mode: str) -> list[str]:
    """`_matching` over names listed earlier: the type of each (rare) match is read by its stat,
    as the listing's entry gives it (FILES and DIRS_FOLLOWED follow links, DIRS does not)."""
    import stat

    out = []
    for name in _candidates(names, globs):
        if not _matches(name, globs):
            continue
        try:
            path = os.path.join(folder, name)
            st = os.lstat(path) if mode == DIRS else os.stat(path)
        except (OSError, ValueError):
            continue  # gone, a broken link (or a name no entry has): not a file nor a folder
        if stat.S_ISREG(st.st_mode) if mode == FILES else stat.S_ISDIR(st.st_mode):
            out.append(name)
    out.sort()
    return out


def _matching(folder: str, globs: tuple[str, ...], mode: str) -> list[str]:
    try:
        with unrecorded(), os.scandir(folder) as it:
            entries = {e.name: e for e in it}
            found = [entries[n] for n in _candidates(entries, globs) if _matches(n, globs)]
            if mode == FILES:
                names = [e.name for e in found if e.is_file()]
            elif mode == DIRS:
                names = [e.name for e in found if e.is_dir(follow_symlinks=False)]
            else:
                names = [e.name for e in found if e.is_dir()]
    except OSError:
        names = []
    names.sort()
    return names


def _digest(names: list[str]) -> bytes:
    return blake2b("\0".join(names).encode("utf-8", "surrogateescape"), digest_size=16).digest()


def signature(path: str) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def split(items: Iterable[object], code: Iterable[str] = ()) -> tuple[list[str], list[Listing]]:
    """Recorded items as (sorted paths, sorted listings), leaving out the code files (`code`,
    checked separately) and compiled bytecode (it follows its source)."""
    skip = set(code) | _import_dirs()
    paths = sorted(i for i in items if isinstance(i, str) and i not in skip
                   and f"{os.sep}__pycache__{os.sep}" not in i)
    listings = sorted(i for i in items if isinstance(i, tuple))
    return paths, listings


def _import_dirs() -> set[str]:
    """Folders the import system lists to find modules (sys.path, package folders): what they
    hold matters through the modules loaded from them, which are checked as code files."""
    loaded, mods = _loaded()
    key = (loaded, tuple(sys.path), os.getcwd())  # relative entries are made absolute
    got = _import_dirs_memo.get("last")
    if got is not None and got[0] == key:
        return set(got[1])
    out = {os.path.abspath(p) for p in sys.path if isinstance(p, str)}
    for mod in mods:
        for p in getattr(mod, "__path__", None) or ():
            if isinstance(p, str):
                out.add(os.path.abspath(p))
    _import_dirs_memo["last"] = (key, frozenset(out))
    return out


# code_files() and _import_dirs() of the last set of loaded modules (and sys.path) they were made
# for: a command stores several entries (a diff: each side's survey, analysis and samples) with
# the same modules loaded, and each listing walks ~800 modules of an MCP server (~2 ms). One
# (key, value) pair each, replaced whole: threads of the MCP server read them at once.
Loaded = tuple[tuple[str, ...], tuple[int, ...]]
_code_files_memo: dict[str, tuple[tuple[Loaded, str], tuple[str, ...]]] = {}
_import_dirs_memo: dict[str, tuple[tuple[Loaded, tuple[object, ...], str], frozenset[str]]] = {}


def _loaded() -> tuple[Loaded, list[object]]:
    """The loaded modules: their names and ids (a memo key: equal keys are the same modules, and
    the key holds no module object, so a module dropped from sys.modules can be freed), and the
    modules of that same snapshot (another thread may import meanwhile)."""
    mods = dict(sys.modules)
    return (tuple(mods), tuple(map(id, mods.values()))), list(mods.values())


def largest_file(paths: list[str]) -> int:
    """Size of the largest regular file among `paths` (0 when none)."""
    from stat import S_ISREG

    best = 0
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if S_ISREG(st.st_mode) and st.st_size > best:
            best = st.st_size
    return best


def signatures(paths: list[str]) -> list[Signature]:
    return [signature(p) for p in paths]


# Signatures already confirmed within one command (`one_command()`, opened by the capture session):
# entries of one command (a report's analysis, its survey, its views) share most paths, and a
# command runs for seconds, not for the time it takes someone to edit a capture. Outside a
# command every check stats afresh. A context variable: each command of the MCP server runs in a
# worker thread with a copy of the context (anyio.to_thread), so concurrent commands never see
# each other's memo; a thread a command starts itself begins with an empty context (no memo).
_confirmed: ContextVar[dict[str, Signature] | None] = ContextVar("hotspot_confirmed_sigs",
                                                                 default=None)


class one_command:  # noqa: N801 - used as a function
    def __enter__(self) -> None:
        self.token = _confirmed.set({})

    def __exit__(self, *exc: object) -> None:
        _confirmed.reset(self.token)


def unchanged(paths: list[str], sigs: list[Signature]) -> bool:
    if len(paths) != len(sigs):
        return False
    stat = os.stat
    confirmed = _confirmed.get()
    if confirmed is None:
        confirmed = {}
    for path, sig in zip(paths, sigs):
        if path in confirmed and confirmed[path] == sig:
            continue
        try:
            st = stat(path)
        except OSError:
            if sig is not None:
                return False
            confirmed[path] = None
            continue
        now = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
        confirmed[path] = now
        if sig != now:
            return False
    return True


def listings_unchanged(listings: list[Listing]) -> bool:
    return all(_digest(_matching(folder, tuple(globs), mode)) == digest
               for folder, globs, mode, digest in listings)


def settled(sigs: list[Signature], started_ns: int) -> bool:
    """No dependency was modified after `started_ns - RACY_NS` (see RACY_NS)."""
    limit = started_ns - RACY_NS
    return all(s is None or (s[1] < limit and s[2] < limit) for s in sigs)


def code_files() -> list[str]:
    """Source files of every module loaded, outside the standard library (which the interpreter's
    version stands for): hotspot itself, typer, orjson... An entry depends on them all, so an edit
    of the code or an upgrade makes it stale."""
    loaded, mods = _loaded()
    key = (loaded, os.getcwd())  # a relative __file__ is made absolute
    got = _code_files_memo.get("last")
    if got is not None and got[0] == key:
        return list(got[1])
    stdlib, keep = _library_roots()
    out = set()
    for mod in mods:
        f = getattr(mod, "__file__", None)
        if isinstance(f, str):
            if not f.startswith(os.sep):
                f = os.path.abspath(f)
            if not f.startswith(stdlib) or f.startswith(keep):
                out.add(os.path.normpath(f))
    files = sorted(out)
    _code_files_memo["last"] = (key, tuple(files))
    return files


# (standard library folders, installed-package folders), each with a trailing separator
_roots_memo: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _library_roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The standard library's folders (sysconfig's stdlib and platstdlib, and where `os` was loaded
    from) and the installed packages' folders (purelib, platlib), which may lie inside them: an
    interpreter installed without a venv (pyenv, a Docker image) keeps site-packages in its
    stdlib folder, and a venv's platstdlib holds its site-packages. A file is standard library
    when it is under the first and not under the second."""
    got = _roots_memo.get("roots")
    if got is not None:
        return got
    import sysconfig

    paths = sysconfig.get_paths()

    def folders(*names: str) -> tuple[str, ...]:
        out: set[str] = set()
        for name in names:
            p = paths.get(name) if name else os.path.dirname(os.__file__)
            if p:
                for q in (os.path.abspath(p), os.path.realpath(p)):
                    out.add(q.rstrip(os.sep) + os.sep)
        return tuple(sorted(out))

    got = (folders("stdlib", "platstdlib", ""), folders("purelib", "platlib"))
    _roots_memo["roots"] = got
    return got


def code_signatures(code: list[str]) -> list[Signature]:
    """`signatures(code)` of code files, each stat'ed once per command (`one_command()`): the
    code running a command is the code loaded when it started, whatever an edit does meanwhile
    (a later command finds the edit stale). Outside a command every call stats afresh."""
    confirmed = _confirmed.get()
    if confirmed is None:
        return signatures(code)
    out: list[Signature] = []
    for path in code:
        if path in confirmed:
            out.append(confirmed[path])
        else:
            out.append(confirmed.setdefault(path, signature(path)))
    return out


def process_started_ns() -> int:
    """When this process first loaded hotspot (wall clock, ns): every hotspot module it runs was
    read from disk after that. Not the process's start in /proc: a shell's `a && b && hotspot`
    execs hotspot in the shell's own process, which started before `a` wrote the files."""
    got = _started_memo.get("ns")
    if got is not None:
        return got
    import hotspot

    started = hotspot.LOADED_NS
    _started_memo["ns"] = started
    return started


_started_memo: dict[str, int] = {}
_said = {"stale code": False}


def _after(stamp_ns: int, started_ns: int) -> bool:
    """Whether a code file's timestamp may be later than when the process loaded hotspot."""
    if stamp_ns % 1_000_000_000 == 0:  # whole seconds: a coarse file system's, maybe rounded down
        return stamp_ns >= started_ns - RACY_NS
    return stamp_ns > started_ns


def code_loaded_unchanged(code: list[str], sigs: list[Signature]) -> bool:
    """Whether the code files on disk are still the ones this process loaded: none was modified
    (mtime or ctime) after the process started (a whole-second timestamp: nor within RACY_NS
    before, as a coarse file system may round a later edit down; a file written just before the
    start, as `pip install -e . && hotspot ...` does, is the one loaded).
    Else a result computed by the loaded code would be stored under the new code's signatures,
    and served to a process running the new code (a long-lived MCP server, or a notebook, after
    an edit or an upgrade): this process then stores nothing, and says so once on stderr. (An
    absent file, `<stdin>` or one removed, is checked as absent, as before.)"""
    started = process_started_ns()
    for path, sig in zip(code, sigs):
        if sig is not None and (_after(sig[1], started) or _after(sig[2], started)):
            if not _said["stale code"]:
                _said["stale code"] = True
                from hotspot.diagnostics import note

                note(f"note: {path} changed since this process started (or just before): results "
                     "it computes from now on are not stored in the cache (a new process stores them)")
            return False
    return True
