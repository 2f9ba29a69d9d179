"""Kernels the HIP runtime launches on its own (rocclr copy/fill/blit): the runtime's plumbing, not
the user's code. One pattern for every analysis that must tell them apart (counters, ATT trust)."""

from __future__ import annotations

import re

# `__amd_rocclr_copyBuffer`, `__amd_rocclr_fillBufferAligned`, `__amd_rocclr_copyBufferToImage`, ...
# (demangled names may carry a `void ` prefix)
RUNTIME_KERNEL = re.compile(r"^(void )?__amd_rocclr_")


def is_runtime_kernel(name: str) -> bool:
    return bool(RUNTIME_KERNEL.match(name.strip()))
