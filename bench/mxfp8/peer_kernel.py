"""peer_kernel.py - runs one peer function of run_mxfp8_bench.py a few times
(for ncu: `ncu -k regex:triton ... python3 bench/mxfp8/peer_kernel.py
swiglu_q 4096 7168 [mode]`), so that the peer's kernels can be profiled beside
ours. Arguments: function name, rows, cols (K; the input of a gated function
is [rows, 2K]), torch.compile mode ('default', 'max-autotune-no-cudagraphs',
or 'eager')."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_mxfp8_bench as rb  # noqa: E402

name, m, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mode = sys.argv[4] if len(sys.argv) > 4 else "default"
fn = getattr(rb, name)
cols = 2 * k if "swiglu" in name else k
x = torch.randn(m, cols, device="cuda", dtype=torch.bfloat16)
f = fn if mode == "eager" else torch.compile(
    fn, mode=None if mode == "default" else mode, dynamic=False)
for _ in range(3):
    f(x)
torch.cuda.synchronize()
print(f"ran {name} [{m}, {cols}] mode {mode}")
