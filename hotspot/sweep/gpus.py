"""`--gpus`: all | 0-7 | 0,2,5 -> the GPU indices a worker uses."""

from __future__ import annotations

import os
import re

from hotspot.collect import gpu_identity
from hotspot.errors import ToolMissingError, UsageError

# Upper bounds of --gpus: no node has this many GPUs (MI300X/MI355X nodes have 8; partitioned into
# CPX mode 64), and a list longer than this many characters is not a typed GPU list.
MAX_GPUS = 1024
MAX_GPU_SPEC = 4096


def parse_gpus(spec: str, rocprofv3: str | None = None) -> tuple[int, ...]:
    """all | 0-7 | 0,2,5 | 0-3,6 -> GPU indices (HIP ordinals). `all` = what `hotspot doctor` lists.

    Bounded before anything is built: the text is at most MAX_GPU_SPEC characters and every index
    below MAX_GPUS, so a typo such as 0-99999999 is refused at once instead of listing 10^8 GPUs."""
    if len(spec) > MAX_GPU_SPEC:
        raise UsageError(f"--gpus: {len(spec)} characters is not a GPU list", "use all, a range 0-7, or a list 0,2,5")
    text = spec.strip().lower()
    inherited = gpu_identity.pinned_names(os.environ) if text == "all" else None
    if inherited is not None:
        # Already restricted (Slurm --gres): all = every device the runtimes would give this
        # process (the lists by their rules, scheduler.pin_env), whatever the tools enumerate.
        if not inherited:
            raise ToolMissingError("--gpus all: ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES "
                                   "leave this process no GPU", "unset them or list a GPU this host has in them")
        return tuple(range(len(inherited[:MAX_GPUS])))
    if text == "all":
        from hotspot.collect import rocm_tools as tools

        found = tools.find_rocprofv3(rocprofv3)
        gpus, how = tools.list_gpus(found.path if found else None)
        if not gpus:
            raise ToolMissingError(f"--gpus all: no GPU found ({how})",
                                   "run on a GPU node (`hotspot doctor` lists what it sees), or name them: --gpus 0-7")
        return tuple(g.index for g in gpus)
    out: dict[int, None] = {}  # ordered, and membership in O(1)
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d{1,12})\s*(?:-\s*(\d{1,12})\s*)?", part)
        lo = int(m.group(1)) if m else 0
        hi = int(m.group(2) or lo) if m else 0
        if not m or hi < lo:
            raise UsageError(f"--gpus {spec!r} is not a GPU list", "use all, a range 0-7, or a list 0,2,5")
        if hi >= MAX_GPUS:
            raise UsageError(f"--gpus {spec!r}: GPU {hi} is beyond any node ({MAX_GPUS} at most)",
                             "count a node's GPUs from 0 (`hotspot doctor` lists them)")
        out.update(dict.fromkeys(range(lo, hi + 1)))
    return tuple(out)
