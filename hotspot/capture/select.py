"""Choosing the dispatch to analyze among several: ONE ranking, used by analyze, diff, export and
collect (so `collect` and a later `analyze RUNDIR` pick the same dispatch).

Order: readable before unreadable/empty; representative before idle slices (a capture in which
under IDLE_SLICE_EXECUTED_SHARE of the code rows executed saw a sliver of the kernel); then the
kernel's executed coverage (executed instructions), traced waves, wave-level instruction executions
(Σ Hit) and source-mapped share; dispatch id and path break ties.
"""

from __future__ import annotations

import os
from pathlib import Path

from hotspot.capture.codejson import EMPTY_TRACE_HINT, read_code_json
from hotspot.capture.layout import open_dispatch, parse_dir_name, require_dispatch_dirs
from hotspot.capture.model import CodeRow, CodeTable, KernelSymbol
from hotspot.capture.occupancy_json import read_occupancy_json
from hotspot.capture.runtime_kernels import is_runtime_kernel
from hotspot.errors import EmptyTraceError, HotspotError, InputError, UsageError
from hotspot.record import record
from hotspot.userregex import user_regex

# A traced wave set that executed under this share of the kernel's code rows saw a sliver of it
# (waves that retired early, or an idle CU): the `idle-slice` finding uses the same cut.
IDLE_SLICE_EXECUTED_SHARE = 0.05
OK = "ok"


@record
class DispatchCandidate:
    path: str
    status: str                  # "ok", "empty (...)" or "unreadable: ..."
    kernel: str
    waves: int
    executed_instructions: int   # code rows with Hit > 0 (of the selected kernel)
    instructions_hit: int        # Σ Hit: wave-level instruction executions
    code_rows: int
    source_mapped_pct: float
    idle_slice: bool
    dispatch_id: int | None

    def rank_key(self) -> tuple[object, ...]:
        # a HIP runtime kernel (rocclr copy/fill) is never the dispatch the user means
        return (self.status != OK, self.idle_slice, is_runtime_kernel(self.kernel),
                -self.executed_instructions, -self.waves,
                -self.instructions_hit, -self.source_mapped_pct,
                self.dispatch_id if self.dispatch_id is not None else -1, self.path)


def pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


def is_idle_slice(code_rows: int, executed: int) -> bool:
    return code_rows > 0 and executed / code_rows < IDLE_SLICE_EXECUTED_SHARE


def select_kernel(table: CodeTable, regex: str | None, warnings: list[str]
                  ) -> tuple[KernelSymbol | None, tuple[CodeRow, ...]]:
    """The kernel to analyze when code.json holds several: the one `regex` names, else the one whose
    instructions executed most."""
    kernels = list(table.kernels)
    if not kernels:
        return None, table.rows
    if regex:
        pat = user_regex(regex, "--kernel")
        matched = [k for k in kernels if pat.search(k.symbol) or (k.demangled and pat.search(k.demangled))]
        if not matched:
            names = "; ".join(k.demangled or k.symbol for k in kernels)[:400]
            raise InputError(f"{table.path}: no kernel matches --kernel {regex!r}",
                             f"kernels in this code.json: {names}")
        kernels = matched
    if len(kernels) == 1:
        return kernels[0], table.kernel_rows(kernels[0])
    scored = sorted(kernels, key=lambda k: (is_runtime_kernel(k.demangled or k.symbol),
                                            -sum(r.hit for r in table.kernel_rows(k)), k.row_index))
    chosen = scored[0]
    warnings.append(f"{table.path}: {len(kernels)} kernels in code.json; analyzing "
                    f"{chosen.demangled or chosen.symbol} (most executed, runtime kernels last); "
                    "select another with "
                    "--kernel REGEX")
    return chosen, table.kernel_rows(chosen)


def kernel_name(kernel: KernelSymbol | None, d: Path) -> str:
    """The kernel's demangled name, else its symbol, else the name occupancy.json gives, else the dir."""
    if kernel is None:
        return occupancy_kernel_name(d) or d.name
    return kernel.demangled or kernel.symbol


def occupancy_kernel_name(d: Path) -> str | None:
    """A real kernel name from occupancy.json's dispatch map (not a `codeobj / 0xaddr` stand-in)."""
    path = d / "occupancy.json"
    if not path.is_file():
        return None
    try:
        names = read_occupancy_json(path).dispatches
    except HotspotError:
        return None
    real = [v for _, v in sorted(names.items()) if isinstance(v, str) and " / 0x" not in v]
    return real[0] if real else None


def survey(d: Path, kernel_regex: str | None = None, max_bytes: int | None = None) -> DispatchCandidate:
    """What ranking needs of one dispatch dir (reads code.json and the wave listing; kept in the
    result cache while they are unchanged)."""
    from hotspot.cache.derived import cached

    # the cap is part of the key: a survey records a file over it as unreadable, not as an error
    key = (str(d), os.path.abspath(d), kernel_regex, max_bytes)
    return cached("survey", key, lambda _: _survey(d, kernel_regex, max_bytes), [])


def _survey(d: Path, kernel_regex: str | None, max_bytes: int | None) -> DispatchCandidate:
    _, dispatch_id = parse_dir_name(d.name)
    kernel = ""
    waves = executed = hits = rows_n = 0
    mapped_pct = 0.0
    status = OK
    try:
        disp = open_dispatch(d)
        table = read_code_json(d / "code.json", max_bytes)
        sym, rows = select_kernel(table, kernel_regex, [])
        run = [r for r in rows if r.hit > 0]
        kernel, waves, executed = kernel_name(sym, d), len(disp.wave_files), len(run)
        hits, rows_n = sum(r.hit for r in run), len(rows)
        mapped_pct = pct(sum(1 for r in run if r.source), len(run))
        if not disp.wave_files and not disp.pc_sampling:
            status = "empty (no wave files)"
        elif not run and not disp.pc_sampling:
            status = "empty (no executed instruction)"
    except EmptyTraceError:
        status = "empty (code null)"
    except UsageError:
        raise
    except HotspotError as err:
        status = f"unreadable: {err.message}"
    return DispatchCandidate(str(d), status, kernel, waves, executed, hits, rows_n, mapped_pct,
                             is_idle_slice(rows_n, executed), dispatch_id)


def rank_dispatches(dirs: list[Path], kernel_regex: str | None = None, max_bytes: int | None = None
                    ) -> tuple[list[DispatchCandidate], list[str]]:
    """Every dir surveyed and ranked best first; warnings name the unreadable ones."""
    ranking = sorted((survey(d, kernel_regex, max_bytes) for d in dirs), key=DispatchCandidate.rank_key)
    warnings = [f"skipped {c.path}: {c.status.removeprefix('unreadable: ')}" for c in ranking
                if c.status.startswith("unreadable")]
    return ranking, warnings


def usable_ranking(path: Path, kernel_regex: str | None = None, max_bytes: int | None = None
                   ) -> tuple[list[DispatchCandidate], list[DispatchCandidate], list[str]]:
    """(usable candidates best first, the whole ranking, warnings) of every dispatch dir under
    `path`; EmptyTraceError when none is usable."""
    ranking, warnings = rank_dispatches(require_dispatch_dirs(path), kernel_regex, max_bytes)
    usable = [c for c in ranking if c.status == OK]
    if not usable:
        raise_none_usable(path, ranking, kernel_regex, max_bytes)
    return usable, ranking, warnings


def raise_none_usable(path: Path, ranking: list[DispatchCandidate], kernel_regex: str | None = None,
                      max_bytes: int | None = None) -> None:
    """No dispatch dir to analyze: the error of the first unreadable one when there is one (a
    truncated code.json is bad input naming the file, exit 3, not an empty trace), else an empty
    trace (exit 4)."""
    unreadable = [c for c in ranking if c.status.startswith("unreadable")]
    if unreadable:
        d = Path(unreadable[0].path)
        # read it again, raising: the survey kept only the message, this keeps the error's code
        open_dispatch(d)
        select_kernel(read_code_json(d / "code.json", max_bytes), kernel_regex, [])
        raise InputError(unreadable[0].status.removeprefix("unreadable: "),
                         "fix or re-decode that file", code="bad-input")
    states = ", ".join(f"{Path(c.path).name}: {c.status}" for c in ranking)
    raise EmptyTraceError(f"{path}: every dispatch dir is empty ({states})", EMPTY_TRACE_HINT)


def choose_dispatch(path: Path, kernel_regex: str | None = None, max_bytes: int | None = None
                    ) -> tuple[Path, list[str]]:
    """The dispatch dir every command analyzes for `path` (itself when it is one), and warnings."""
    dirs = require_dispatch_dirs(path)
    if len(dirs) == 1:
        return dirs[0], []
    usable, _, warnings = usable_ranking(path, kernel_regex, max_bytes)
    warnings.append(f"{len(dirs)} dispatch dirs under {path}; using {usable[0].path} ("
                    + selection_reason(usable[0], len(dirs)).split("; use --all")[0]
                    + "); pass that dir to choose another")
    return Path(usable[0].path), warnings


def selection_reason(best: DispatchCandidate, total: int) -> str:
    return (f"most executed instructions ({best.executed_instructions}), then most waves "
            f"({best.waves}), then most instruction executions ({best.instructions_hit}) among "
            f"{total} dispatch dirs, idle slices and runtime kernels last; use --all to analyze each")
