"""Family labels from name patterns (one case per pattern family named in the issue)."""

from __future__ import annotations

import pytest

from hotspot.trace.family import FAMILIES, kernel_family

CASES = [
    ("Cijk_Alik_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT160x64x64_MI16x16x1_SN_LDSB1", "GEMM"),
    ("void ck::kernel_gemm_xdl_cshuffle_v3_multi_d_blockscale_b_preshuffle<ck::Gridwise>", "GEMM"),
    ("void ck_tile::kentry<1, ck_tile::BatchedGemmKernel<ck_tile::GemmSpatiallyLocalTilePartitioner>>", "GEMM"),
    ("bs_gemm_bf16_direct_t16x64x256", "GEMM"),
    ("void ck_tile::kentry<1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVS<BlockGemm>>>", "attention"),
    ("void vllm::paged_attention_v2_kernel<__hip_bfloat16, 128>(float*)", "attention"),
    ("kn_mla_fwd_decode_m16x8_fp8_fp8_0", "attention"),
    ("pa_mqa_logits_fp4_kernel_0", "attention"),
    ("void aiter::fmoe_bf16_g1u1_subGU_256(int)", "MoE"),
    ("void ck::kernel_moe_gemm<ck::GridwiseMoeGemm>", "MoE"),
    ("__amd_rocclr_copyBuffer", "copy"),
    ("__amd_rocclr_fillBufferAligned", "copy"),
    ("void at::native::elementwise_kernel_manual_unroll<128, 4, at::native::direct_copy_kernel_cuda>", "copy"),
    ("ncclDevKernel_Generic(ncclDevComm*)", "collective"),
    ("void rcclAllReduceKernel<0>()", "collective"),
    ("void vllm::cross_device_reduce_1stage<half, 8>(vllm::RankData*)", "collective"),
    ("reduce_scatter_kernel", "collective"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>>", "elementwise"),
    ("triton_poi_fused_add_mul_0", "elementwise"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>", "other"),
    ("vecAddKernel_0", "other"),
]


@pytest.mark.parametrize("name, family", CASES)
def test_family(name: str, family: str) -> None:
    assert kernel_family(name) == family


def test_every_family_is_exercised() -> None:
    assert {f for _, f in CASES} == set(FAMILIES)
