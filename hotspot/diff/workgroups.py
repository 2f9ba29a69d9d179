"""Which traced waves belong to one workgroup, and which workgroups are alike: the units diff's
resampling draws (hotspot/diff/stats.py).

The wave files carry no workgroup id. The waves of one workgroup run on one CU (of one shader
engine) and are launched back to back, so they are grouped by (dispatch, SE, CU) and start time:
in start order, a wave joins the open group while it begins within WORKGROUP_LAUNCH_GAP cycles of
the group's previous wave and the group has fewer than the workgroup's waves (workgroup size /
wave size, when the kernel trace gives the size). Waves of one workgroup share their work and
their memory traffic, so they are not independent: 32 traced waves are about 8 workgroups.

Like is compared with like by position in the grid: a workgroup's launch round on its CU (the first
group launched there, the second, ...) is its stratum; workgroups are drawn within their stratum.
In a causal attention kernel the rounds differ by 3x in work; mixing them moved one estimate from
+0.3% to +5.3% (issue 34).
"""

from __future__ import annotations

from collections.abc import Sequence

from hotspot.diff.noise import WORKGROUP_LAUNCH_GAP

# (dispatch index, shader engine, CU, begin cycle) of one traced wave
Placement = tuple[int, int, int, int]


def workgroups(placement: Sequence[Placement], size: int | None) -> list[list[int]]:
    """Wave indexes grouped into workgroups, each group in start order, groups ordered by their
    (dispatch, SE, CU, first start)."""
    order = sorted(range(len(placement)), key=lambda i: (placement[i], i))
    groups: list[list[int]] = []
    last: Placement | None = None
    for i in order:
        p = placement[i]
        open_group = groups[-1] if groups else None
        if (open_group is not None and last is not None and p[:3] == last[:3]
                and p[3] - last[3] <= WORKGROUP_LAUNCH_GAP
                and (size is None or len(open_group) < size)):
            open_group.append(i)
        else:
            groups.append([i])
        last = p
    return groups


def strata(groups: Sequence[Sequence[int]], placement: Sequence[Placement]) -> list[list[int]]:
    """Group indexes by launch round on their CU (0 = the first workgroup launched there). Rounds
    holding a single workgroup cannot be resampled within: then all groups are one stratum."""
    rounds: dict[int, list[int]] = {}
    seen: dict[tuple[int, int, int], int] = {}
    for g, members in enumerate(groups):
        where = placement[members[0]][:3]
        r = seen.get(where, 0)
        seen[where] = r + 1
        rounds.setdefault(r, []).append(g)
    out = [rounds[r] for r in sorted(rounds)]
    if len(out) > 1 and min(len(s) for s in out) < 2:
        return [list(range(len(groups)))]
    return out


def waves_per_workgroup(workgroup_threads: object, gfx: str | None) -> int | None:
    """The workgroup's waves: its size over the target's wave size, when both are known."""
    from hotspot.arch.targets import find_target

    target = find_target(gfx)
    if not isinstance(workgroup_threads, int) or workgroup_threads <= 0 or target is None:
        return None
    return -(-workgroup_threads // target.wave_size)
