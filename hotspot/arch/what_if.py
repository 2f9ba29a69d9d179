"""`hotspot occupancy` use case: occupancy of a hypothetical kernel configuration."""

from __future__ import annotations

from hotspot.arch.occupancy_model import Occupancy, compute_occupancy
from hotspot.arch.products import find_product
from hotspot.arch.targets import ArchTarget, get_target
from hotspot.errors import InputError, UsageError
from hotspot.result import Result

COMMAND = "occupancy"


def resolve_arch(arch: str) -> ArchTarget:
    """A gfx target, or a product name ("MI300X", "AMD Instinct MI355X") standing for its gfx."""
    try:
        return get_target(arch)
    except InputError:
        product = find_product(arch)
        if product is None:
            raise
        return get_target(product.gfx)


def what_if(arch: str, vgpr: int, agpr: int = 0, sgpr: int | None = None, lds_bytes: int = 0,
            wg_threads: int | None = None, sgpr_includes_implicit: bool = False) -> Result[Occupancy]:
    """Occupancy for a hypothetical configuration; bad values are usage errors (exit 2)."""
    try:
        target = resolve_arch(arch)
        occupancy = compute_occupancy(target, vgpr, agpr, sgpr, lds_bytes, wg_threads,
                                      sgpr_includes_implicit=sgpr_includes_implicit)
    except InputError as err:
        raise UsageError(err.message, err.hint, code="usage") from None
    return Result(COMMAND, occupancy)
