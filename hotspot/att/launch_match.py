"""Which kernel-trace row is the traced dispatch's launch (grid, workgroup, duration), and how sure
that is.

A kernel name is not a dispatch: one name can be launched with several grid shapes in one run (a
small and a big config), and the first dispatch of a name is often a cold one. So:
- a row is the dispatch's own when its dispatch id AND kernel name match, in a file of the same
  rocprofv3 run (`match = dispatch-id`); its duration is that dispatch's;
- otherwise, by name alone only when every row of that name has one grid shape
  (`match = name-unique-shape`); the duration is the median over those rows (`median-of-N`);
- several shapes and no id match: the grid is unknown (`status = grid-unknown`), the rows that
  disagree are listed, and nothing grid-based is claimed.
The grid is then checked against the traced waves: a launch whose grid makes fewer waves than the
capture traced cannot be this dispatch (`status = inconsistent`).
Pure over the records a reader gave; no file is read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, replace
from statistics import median

from hotspot.capture import DispatchRecord
from hotspot.record import record

# launch.status values: only MATCHED launches feed grid-based plan items.
MATCHED = "matched"
GRID_UNKNOWN = "grid-unknown"
INCONSISTENT = "inconsistent"
# launch.match / duration_source values
BY_DISPATCH_ID = "dispatch-id"
BY_UNIQUE_SHAPE = "name-unique-shape"
MEDIAN_OF = "median-of-{n}"
# Rows listed when several grid shapes disagree (the rest are counted).
MAX_ROWS_LISTED = 8

# How far the grid of a row matched by name only (its dispatch id absent) may differ from the
# workgroups the capture itself shows when it ran in one round, before the row is refused as
# another run's or config's launch. The allowed difference is the larger of the two.
CAPTURE_GRID_TOLERANCE: dict[str, tuple[float, str]] = {
    "relative": (0.15, "the traced shader engines stand for the others by their share: CDNA3 XCDs "
                       "split 38 CUs 9/10 over 4 SEs and the dispatcher deals workgroups unevenly, so "
                       "one SE's share is 1/SEs within about 10%; 15% leaves margin"),
    "workgroups_per_se": (1.0, "workgroups are dealt round-robin over the shader engines: each may "
                               "hold one more or one fewer than an even share"),
}


@record
class LaunchRow:
    """One kernel-trace row a launch value came from (or that disagrees with another)."""

    file: str
    row: int | None            # CSV line (header = 1) or rocpd `kernels` row id
    dispatch_id: int | None
    grid: list[int] | None
    workgroup: list[int] | None
    duration_ns: int | None


@record
class LaunchOut:
    """The kernel's launch as the matched kernel-trace / rocpd rows give it (grid and workgroup in
    work-items), the workgroups it makes, and the CUs of the product it ran on. `grid`,
    `workgroup`, `workgroups` are null unless `status` is `matched` or `inconsistent`."""

    grid: list[int] | None
    workgroup: list[int] | None
    workgroups: int | None
    duration_ns: int | None
    cus: int | None          # compute units of the product (arch product table), when known
    source: str              # the file the rows came from
    peak_hbm_gbps: float | None = None  # the product's peak HBM bandwidth (arch product table)
    status: str = MATCHED    # matched | grid-unknown | inconsistent
    match: str = BY_DISPATCH_ID        # how the grid's row was found (dispatch-id | name-unique-shape)
    duration_source: str | None = None  # dispatch-id | median-of-N | None (no duration)
    # the rows used, or those that disagree: the first MAX_ROWS_LISTED of `row_count`
    rows: list[LaunchRow] = field(default_factory=list)
    row_count: int = 0
    reason: str = ""         # why the grid is unknown or inconsistent; "" when matched
    waves_in_grid: int | None = None   # workgroups x waves per workgroup (wave size of the arch)
    traced_waves: int | None = None    # wave files of the capture (the check's other side)


def _row(rec: DispatchRecord, path: str) -> LaunchRow:
    return LaunchRow(path, rec.row, rec.dispatch_id, list(rec.grid) if rec.grid else None,
                     list(rec.workgroup) if rec.workgroup else None, rec.duration_ns)


def _shape(rec: DispatchRecord) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    if not rec.grid or not rec.workgroup or any(w <= 0 for w in rec.workgroup):
        return None
    return (tuple(rec.grid), tuple(rec.workgroup))


def workgroups_of(grid: Sequence[int], workgroup: Sequence[int]) -> int:
    groups = 1
    for g, w in zip(grid, workgroup):
        groups *= -(-g // w)  # ceil: a partial workgroup still occupies a slot
    return groups


def waves_per_workgroup(workgroup: Sequence[int], wave_size: int) -> int:
    threads = 1
    for w in workgroup:
        threads *= w
    return -(-threads // wave_size)


def match_launch(named: Sequence[DispatchRecord], path: str, dispatch_id: int | None,
                 traced_waves: int | None, wave_size: int | None, cus: int | None,
                 peak_hbm_gbps: float | None) -> LaunchOut | None:
    """The launch of the traced dispatch among `named` (the rows of one file whose kernel name is
    the traced kernel's, in file order). `dispatch_id`: the traced dispatch's id, passed only when
    the file comes from the same run. None when no row has a grid and a workgroup size."""
    shaped = [r for r in named if _shape(r) is not None]
    if not shaped:
        return None
    own = [r for r in shaped if dispatch_id is not None and r.dispatch_id == dispatch_id]
    if own:
        rec = own[0]
        out = _matched(rec, [rec], path, BY_DISPATCH_ID, rec.duration_ns,
                       BY_DISPATCH_ID if rec.duration_ns is not None else None, cus, peak_hbm_gbps)
        return _checked(out, traced_waves, wave_size)
    shapes: dict[tuple[tuple[int, ...], tuple[int, ...]], list[DispatchRecord]] = {}
    for r in shaped:
        shape = _shape(r)
        if shape is not None:  # every one of `shaped`
            shapes.setdefault(shape, []).append(r)
    if len(shapes) > 1:
        listed = [_row(r, path) for rs in shapes.values() for r in rs][:MAX_ROWS_LISTED]
        desc = "; ".join(f"{'x'.join(map(str, s[0]))} (workgroup {'x'.join(map(str, s[1]))}): "
                         f"{len(rs)} row(s), e.g. {_where(rs[0])}" for s, rs in shapes.items())
        why = (f"{len(shaped)} rows name this kernel with {len(shapes)} grid shapes ({desc})"
               + (" and none has the traced dispatch's id" if dispatch_id is not None else
                  " and the file is not from the capture's run (dispatch ids do not apply)")
               + ": the traced dispatch's grid and duration are unknown; name the run's kernel "
               "trace with --meta")
        return LaunchOut(None, None, None, None, cus, path, peak_hbm_gbps, GRID_UNKNOWN, "none",
                         None, listed, len(shaped), why, None, traced_waves)
    rows = next(iter(shapes.values()))
    durations = [r.duration_ns for r in rows if r.duration_ns is not None]
    duration = int(median(durations)) if durations else None
    out = _matched(rows[0], rows, path, BY_UNIQUE_SHAPE, duration,
                   MEDIAN_OF.format(n=len(durations)) if durations else None, cus, peak_hbm_gbps)
    return _checked(out, traced_waves, wave_size)


def _where(rec: DispatchRecord) -> str:
    parts = []
    if rec.row is not None:
        parts.append(f"row {rec.row}")
    if rec.dispatch_id is not None:
        parts.append(f"dispatch {rec.dispatch_id}")
    return " ".join(parts) or "a row"


def _matched(rec: DispatchRecord, rows: Sequence[DispatchRecord], path: str, how: str,
             duration: int | None, duration_source: str | None, cus: int | None,
             peak: float | None) -> LaunchOut:
    assert rec.grid is not None and rec.workgroup is not None
    return LaunchOut(list(rec.grid), list(rec.workgroup), workgroups_of(rec.grid, rec.workgroup),
                     duration, cus, path, peak, MATCHED, how, duration_source,
                     [_row(r, path) for r in rows[:MAX_ROWS_LISTED]], len(rows))


def _checked(out: LaunchOut, traced_waves: int | None, wave_size: int | None) -> LaunchOut:
    """The grid against the traced waves: every traced wave belongs to the dispatch, so a grid
    making fewer waves than were traced is not this dispatch's."""
    if wave_size is None or out.grid is None or out.workgroup is None or out.workgroups is None:
        return replace(out, traced_waves=traced_waves)
    grid, workgroup = out.grid, out.workgroup
    waves = out.workgroups * waves_per_workgroup(workgroup, wave_size)
    out = replace(out, waves_in_grid=waves, traced_waves=traced_waves)
    if traced_waves is not None and traced_waves > waves:
        return replace(out, status=INCONSISTENT, reason=(
            f"the matched row's grid {'x'.join(map(str, grid))} (workgroup "
            f"{'x'.join(map(str, workgroup))}) makes {waves:,} waves but the capture traced "
            f"{traced_waves:,}: the row is not this dispatch's launch (another run or config); "
            "name the run's kernel trace with --meta"))
    return out


def checked_against_occupancy(out: LaunchOut, busy_cus_per_se: dict[str, int], one_round: bool | None,
                              cus_per_se: float | None) -> LaunchOut:
    """A row matched by name only, against what occupancy.json saw on the traced shader engines: a
    grid with a workgroup for every CU would have put work on every CU of those SEs, so when the
    whole capture fits in one round on fewer CUs (hotspot/arch/achieved.py) the row is another
    run's or config's launch (a discovery trace of the big config beside a small-config capture)."""
    if (out.status != MATCHED or out.match == BY_DISPATCH_ID or one_round is not True
            or not busy_cus_per_se or cus_per_se is None or out.workgroups is None or not out.cus
            or out.workgroups < out.cus):
        return out
    traced_ses = len(busy_cus_per_se)
    busy = sum(busy_cus_per_se.values())
    room = traced_ses * int(cus_per_se)  # the fewest CUs those SEs can have
    if busy >= room:
        return out
    return replace(out, status=INCONSISTENT, reason=(
        f"the row(s) matched by name give {out.workgroups:,} workgroups, a workgroup for every one of "
        f"the {out.cus} CUs, but on the {traced_ses} traced shader engine(s) only {busy} of at least "
        f"{room} CUs ran a workgroup, all in one round (occupancy.json): the row is another run's or "
        "config's launch; name this run's kernel trace with --meta"))


def capture_workgroups(started_waves: int, traced_ses: int, ses_total: int, waves_per_wg: int) -> float:
    """The grid's workgroups as a capture that ran in one round shows them: the wave starts on the
    traced shader engines ÷ waves per workgroup, × (the product's SEs ÷ traced SEs) — workgroups
    are dealt round-robin over XCDs and SEs, so each SE holds its share."""
    return started_waves / waves_per_wg * ses_total / traced_ses


def checked_against_capture_grid(out: LaunchOut, started_waves: int | None, traced_ses: int,
                                 ses_total: int | None, wave_size: int | None,
                                 one_round: bool | None) -> LaunchOut:
    """A row matched by name only, against the capture's own workgroup count: when every workgroup
    of the traced shader engines was resident in one round (occupancy.json), their wave starts ÷
    waves per workgroup are all the workgroups those SEs got, and × (SEs of the product ÷ traced
    SEs) the grid (round-robin over XCDs and SEs). A row off by more than `CAPTURE_GRID_TOLERANCE`
    is another run's or config's launch."""
    if (out.status != MATCHED or out.match == BY_DISPATCH_ID or one_round is not True
            or not started_waves or traced_ses <= 0 or not ses_total or not wave_size
            or out.workgroup is None or out.workgroups is None):
        return out
    per_wg = waves_per_workgroup(out.workgroup, wave_size)
    if per_wg <= 0:
        return out
    estimate = capture_workgroups(started_waves, traced_ses, ses_total, per_wg)
    rel, _ = CAPTURE_GRID_TOLERANCE["relative"]
    per_se, _ = CAPTURE_GRID_TOLERANCE["workgroups_per_se"]
    allowed = max(rel * estimate, per_se * ses_total)
    if abs(out.workgroups - estimate) <= allowed:
        return out
    return replace(out, status=INCONSISTENT, reason=(
        f"the row(s) matched by name (no dispatch id) give {out.workgroups:,} workgroups, but the "
        f"capture ran in one round with {started_waves:,} wave starts on {traced_ses} traced shader "
        f"engine(s) = {started_waves / per_wg:,.0f} workgroups, about {estimate:,.0f} over the "
        f"product's {ses_total} SEs (tolerance ±{allowed:,.0f}): the row is another run's or "
        "config's launch; name this run's kernel trace with --meta"))
