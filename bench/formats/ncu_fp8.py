# ncu_fp8.py - the FP8 kernels under ncu (docs/benchmarks/formats.md,
# fp8_block.md): per-tensor cast + transpose (delayed and current scaling),
# 1x128 groups and per-row blocks of a bf16 16384x16384 input, twice each.
import os, sys, torch
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
import fusion_rt
x = torch.randn(16384, 16384, device="cuda", dtype=torch.bfloat16)
sc = torch.tensor([2.0], device="cuda")
for _ in range(2):
    fusion_rt.quantize(x, "fp8_e4m3", scale=sc, direction="both",
                       colwise_layout="transposed")
    fusion_rt.quantize(x, "fp8_e4m3", direction="both", colwise_layout="transposed")
    fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=128, amax_epsilon=1e-10)
    fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=16384, amax_epsilon=1e-10)
torch.cuda.synchronize()
