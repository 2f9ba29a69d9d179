"""A short family label for a kernel name, from a pattern table (first match wins).

Order matters: MoE GEMMs are MoE, CK attention kernels carry "Gemm" in their template arguments,
and PyTorch copy kernels are instantiated through `elementwise_kernel`, so the more specific
families are tried first.
"""

from __future__ import annotations

import re
from functools import lru_cache

OTHER = "other"

# (family, pattern) searched case-insensitively in the demangled name.
FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    ("collective", r"rccl|nccl|reduce_?scatter|all_?gather|all_?reduce|all_?to_?all|cross_device_reduce"),
    ("MoE", r"(?:^|[^a-z])f?moe|moe_|_moe|topk_?gating|moe_align|expert"),
    ("attention", r"fmha|flash_?attn|attention|attn|paged_?attention|(?:^|[^a-z])mla_|_mla|mqa|mha_|_mha"),
    ("GEMM", r"^cijk_|gemm|gemv|matmul|hipblaslt|wvsplitk|batched_?gemm"),
    ("copy", r"rocclr_copy|copybuffer|fillbuffer|memcpy|memset|copy_kernel|copykernel"),
    ("elementwise", r"elementwise|triton_|norm_kernel|rms_?norm|layer_?norm|"
                    r"act_and_mul|silu|gelu|softmax"),
)

_COMPILED = tuple((family, re.compile(pattern, re.IGNORECASE)) for family, pattern in FAMILY_PATTERNS)
FAMILIES: tuple[str, ...] = tuple(f for f, _ in FAMILY_PATTERNS) + (OTHER,)


@lru_cache(maxsize=4096)
def kernel_family(name: str) -> str:
    for family, rx in _COMPILED:
        if rx.search(name):
            return family
    return OTHER
