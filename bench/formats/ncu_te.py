# ncu_te.py - the FP8 per-tensor delayed rowwise cast, the 1x128 and the
# current-scaling cast of a bf16 16384x16384 input, ours then
# TransformerEngine's (bench/formats/te_peer.py), twice each: the calls ncu
# profiles in bench/formats/cast_probe_device.sh.
import os, sys, torch
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
sys.path.insert(0, os.path.join(os.getcwd(), "bench", "formats"))
import fusion_rt, te_peer
te = te_peer.TE(sys.argv[1])
x = torch.randn(16384, 16384, device="cuda", dtype=torch.bfloat16)
sc = torch.tensor([2.0], device="cuda")
for _ in range(2):
    fusion_rt.quantize(x, "fp8_e4m3", scale=sc)
    te.fp8_tensor(x, scale=sc)
    fusion_rt.quantize(x, "fp8_e4m3")
    te.fp8_tensor(x)
    fusion_rt.quantize(x, "fp8_block_e4m3", block_cols=128, amax_epsilon=1e-12,
                      nvfp4_recipe="multiply")
    te.fp8_block(x, dim=1)
torch.cuda.synchronize()
