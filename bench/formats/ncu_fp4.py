# ncu_fp4.py - the FP4 stream kernels under ncu (docs/benchmarks/formats.md):
# MXFP4, NVFP4 and SiLU -> NVFP4 of a bf16 4096x7168 input, twice each.
import os, sys, torch
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
import fusion_rt
x = torch.randn(4096, 7168, device="cuda", dtype=torch.bfloat16)
for _ in range(2):
    fusion_rt.quantize(x, "mxfp4")
    fusion_rt.quantize(x, "nvfp4")
    fusion_rt.act_quantize(x, "silu", "nvfp4", intermediate_dtype=torch.bfloat16)
torch.cuda.synchronize()
