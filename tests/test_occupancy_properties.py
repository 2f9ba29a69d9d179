"""Hypothesis properties of the occupancy model.

- Monotone: using more of any resource (arch VGPRs, AGPRs, SGPRs, LDS) never adds waves.
  The workgroup size is not a "resource use" here: slot limits are not monotone in it (7 waves → 7,
  8 waves → 8 per SIMD), which is why its next step scans shapes instead.
- Next steps are exact: setting the resource to `max_allowed` makes that limit exactly
  `target_waves` (> current; +1 or more when the limit moves in steps), one unit more does not
  reach it, and applying every binding step of the monotone resources raises the total waves.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from hotspot.arch.occupancy_model import (
    align_to,
    compute_occupancy,
    lds_waves,
    sgpr_total,
    sgpr_waves,
    vgpr_total,
    vgpr_waves,
    waves_per_workgroup,
    workgroup_waves,
)
from hotspot.arch.targets import KNOWN_GFX, SEPARATE, get_target

SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def configs(draw):
    target = get_target(draw(st.sampled_from(KNOWN_GFX)))
    vgpr = draw(st.integers(0, target.max_arch_vgprs_per_wave))
    if target.vgpr_file == SEPARATE:
        agpr = draw(st.integers(0, target.max_agprs_per_wave))
    else:
        agpr = draw(st.integers(0, target.vgprs_per_lane - align_to(vgpr, target.agpr_base_align)))
    includes = draw(st.booleans())
    sgpr_max = 112 if includes else target.max_user_sgprs_per_wave
    sgpr = draw(st.one_of(st.none(), st.integers(0, sgpr_max)))
    lds = draw(st.one_of(st.just(0), st.integers(1, target.max_lds_per_workgroup_bytes)))
    wg = draw(st.one_of(st.none(), st.integers(1, target.max_workgroup_threads)))
    return target, dict(vgpr=vgpr, agpr=agpr, sgpr=sgpr, lds_bytes=lds, wg_threads=wg,
                        sgpr_includes_implicit=includes)


def _occ(target, cfg):
    return compute_occupancy(target, **cfg)


def _valid(target, cfg) -> bool:
    from hotspot.errors import InputError
    try:
        _occ(target, cfg)
    except InputError:
        return False
    return True


@SETTINGS
@given(configs(), st.sampled_from(["vgpr", "agpr", "sgpr", "lds_bytes"]), st.integers(1, 2048))
def test_more_resource_never_more_waves(config, field, extra):
    target, cfg = config
    if cfg[field] is None:
        return
    bigger = dict(cfg, **{field: cfg[field] + extra})
    if not _valid(target, bigger):
        return
    assert _occ(target, bigger).waves_per_simd <= _occ(target, cfg).waves_per_simd
    for name in ("vgpr", "sgpr", "lds"):
        before, after = _occ(target, cfg).limits[name], _occ(target, bigger).limits[name]
        if before is not None and after is not None:  # LDS > 0 without a workgroup size is unknown
            assert after <= before


def _limit_after(target, cfg, name, resource, value):
    """The named limit once `resource` is set to `value` (other inputs unchanged)."""
    if resource == "vgpr_total":
        return vgpr_waves(target, value)
    if resource == "vgpr_max":
        return vgpr_waves(target, value)
    if resource == "sgpr":
        return sgpr_waves(target, sgpr_total(target, value, cfg["sgpr_includes_implicit"]))
    if resource == "lds_bytes":
        return lds_waves(target, value, waves_per_workgroup(target, cfg["wg_threads"]))
    assert resource == "wg_threads"
    return workgroup_waves(target, waves_per_workgroup(target, value))


@SETTINGS
@given(configs())
def test_next_steps_are_exact(config):
    target, cfg = config
    occ = _occ(target, cfg)
    for name in occ.limiters:
        if name == "hardware":
            continue
        assert name in occ.next_step, f"binding {name} without a next step"
        step = occ.next_step[name]
        assert step.target_waves > occ.waves_per_simd
        assert step.reduce_by == step.current - step.max_allowed > 0
        assert _limit_after(target, cfg, name, step.resource, step.max_allowed) == step.target_waves
        if step.resource != "wg_threads":
            # maximal: one more unit keeps the current limit
            assert _limit_after(target, cfg, name, step.resource, step.max_allowed + 1) == occ.limits[name]
        plain = step.message.replace(",", "")
        assert plain.startswith(f"{step.target_waves} waves/SIMD needs")
        assert str(step.max_allowed) in plain or f"{step.max_allowed // 1024} KiB" in plain


@SETTINGS
@given(configs())
def test_vgpr_alternatives_reach_the_target(config):
    target, cfg = config
    occ = _occ(target, cfg)
    step = occ.next_step.get("vgpr")
    if step is None:
        return
    for field, value in step.alternatives.items():
        changed = dict(cfg, **{field: value})
        assert _occ(target, changed).limits["vgpr"] >= step.target_waves
        one_more = dict(cfg, **{field: value + 1})
        assert vgpr_waves(target, vgpr_total(target, one_more["vgpr"], one_more["agpr"])) < step.target_waves


@SETTINGS
@given(configs())
def test_applying_all_binding_steps_gains_waves(config):
    target, cfg = config
    occ = _occ(target, cfg)
    if occ.limiter == "hardware" or "workgroup" in occ.limiters:
        return
    applied = dict(cfg)
    for name, step in occ.next_step.items():
        if step.resource == "vgpr_total":
            # realize the total: agpr absorbs what it can, keeping T = max_allowed exactly
            base = align_to(cfg["vgpr"], target.agpr_base_align)
            if cfg["agpr"] > 0 and step.max_allowed > base:
                applied["agpr"] = step.max_allowed - base
            else:
                applied["vgpr"], applied["agpr"] = step.max_allowed, 0
            assert vgpr_total(target, applied["vgpr"], applied["agpr"]) == step.max_allowed
        elif step.resource == "vgpr_max":
            applied["vgpr"] = min(cfg["vgpr"], step.max_allowed)
            applied["agpr"] = min(cfg["agpr"], step.max_allowed)
        else:
            applied[{"sgpr": "sgpr", "lds_bytes": "lds_bytes"}[step.resource]] = step.max_allowed
    after = _occ(target, applied)
    expected = min(v for k, v in after.limits.items() if v is not None)
    assert after.waves_per_simd == expected > occ.waves_per_simd
    # each stepped limit landed exactly on its target
    for name, step in occ.next_step.items():
        assert after.limits[name] == step.target_waves


@SETTINGS
@given(configs())
def test_waves_is_the_minimum_of_known_limits(config):
    target, cfg = config
    occ = _occ(target, cfg)
    known = {k: v for k, v in occ.limits.items() if v is not None}
    assert occ.waves_per_simd == min(known.values())
    assert 1 <= occ.waves_per_simd <= target.max_waves_per_simd
    assert occ.limiter == occ.limiters[0]
    assert all(occ.limits[name] == occ.waves_per_simd for name in occ.limiters)
    assert dataclasses.asdict(occ)  # serializable structure
