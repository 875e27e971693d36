"""TransformerEngine 2.20's FP8 kernels as a benchmark peer (through
bench/formats/te_shim.cpp, which calls TE's C API the way its PyTorch
quantizers do). Each function takes a bf16 CUDA tensor, allocates its
outputs with torch and runs on the current stream, so that it can be
captured in the benchmarks' CUDA graphs.

Scale layouts are TE's GEMM-ready ones: 1x128 scale_inv [ceil(K/128),
round_up(M, 4)] (returned transposed and cut to [M, K/128] as a view) and
128x128 scale_inv [ceil(M/128), round_up(ceil(K/128), 4)] (cut to
[M/128, K/128]).
"""
import ctypes

import torch

_P, _Z, _I, _F = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_float


def _ceil(a, b):
    return (a + b - 1) // b


class TE:
    def __init__(self, path):
        # TE's library calls NVRTC without linking it (its Python package
        # loads it first, globally): do the same.
        try:
            ctypes.CDLL("libnvrtc.so.13", mode=ctypes.RTLD_GLOBAL)
        except OSError:
            pass
        lib = ctypes.CDLL(path)
        lib.te_last_error.restype = ctypes.c_char_p
        lib.te_fp8_tensor.argtypes = [_P, _Z, _Z, _P, _P, _P, _P, _P, _I, _I, _F, _P]
        lib.te_fp8_block.argtypes = [_P, _Z, _Z, _I, _P, _P, _Z, _Z, _I, _F, _P]
        lib.te_swiglu_fp8_block.argtypes = [_P, _Z, _Z, _P, _P, _P, _Z, _Z, _I, _F, _P]
        lib.te_swiglu_fp8_tensor.argtypes = [_P, _Z, _Z, _P, _P, _P, _P, _P]
        self.lib = lib

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError("TE %s: %s" % (what, self.lib.te_last_error().decode()))

    @staticmethod
    def _stream():
        return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def fp8_tensor(self, x, scale=None, rowwise=True, transpose=False, pow2=False, eps=0.0):
        """Per-tensor e4m3: delayed scaling with `scale` (f32 [1]), else
        current scaling. Returns (rowwise or None, transposed or None,
        scale_inv, amax)."""
        m, n = x.shape
        row = torch.empty(m, n, dtype=torch.float8_e4m3fn, device=x.device) if rowwise else None
        col = torch.empty(n, m, dtype=torch.float8_e4m3fn, device=x.device) if transpose else None
        current = scale is None
        sc = torch.empty(1, dtype=torch.float32, device=x.device) if current else scale
        amax = torch.zeros(1, dtype=torch.float32, device=x.device)
        sinv = torch.empty(1, dtype=torch.float32, device=x.device)
        self._check(self.lib.te_fp8_tensor(
            x.data_ptr(), m, n, row.data_ptr() if row is not None else None,
            col.data_ptr() if col is not None else None, sc.data_ptr(), amax.data_ptr(),
            sinv.data_ptr(), int(current), int(pow2), eps, self._stream()), "fp8_tensor")
        return row, col, sinv, amax

    def _block_scales(self, m, k, dim, device):
        if dim == 1:
            s0, s1 = _ceil(k, 128), _ceil(m, 4) * 4
        else:
            s0, s1 = _ceil(m, 128), _ceil(_ceil(k, 128), 4) * 4
        return torch.empty(s0, s1, dtype=torch.float32, device=device), s0, s1

    @staticmethod
    def _cut(s, m, k, dim):
        return s[:, :m].t() if dim == 1 else s[:, :_ceil(k, 128)]

    def fp8_block(self, x, dim=1, pow2=False, eps=0.0):
        """Float8BlockScaling rowwise: (codes [M, K], scale_inv view)."""
        m, k = x.shape
        row = torch.empty(m, k, dtype=torch.float8_e4m3fn, device=x.device)
        s, s0, s1 = self._block_scales(m, k, dim, x.device)
        self._check(self.lib.te_fp8_block(x.data_ptr(), m, k, dim, row.data_ptr(),
                                          s.data_ptr(), s0, s1, int(pow2), eps,
                                          self._stream()), "fp8_block")
        return row, self._cut(s, m, k, dim)

    def swiglu_fp8_block(self, x, fused, pow2=False, eps=0.0):
        """SwiGLU of x [M, 2K] into 1x128 FP8: fused (nvte_swiglu into the
        block-scaled output) or two kernels (bf16 SwiGLU, then the cast)."""
        m, k = x.shape[0], x.shape[1] // 2
        row = torch.empty(m, k, dtype=torch.float8_e4m3fn, device=x.device)
        tmp = None if fused else torch.empty(m, k, dtype=torch.bfloat16, device=x.device)
        s, s0, s1 = self._block_scales(m, k, 1, x.device)
        self._check(self.lib.te_swiglu_fp8_block(
            x.data_ptr(), m, k, tmp.data_ptr() if tmp is not None else None, row.data_ptr(),
            s.data_ptr(), s0, s1, int(pow2), eps, self._stream()), "swiglu_fp8_block")
        return row, self._cut(s, m, k, 1)

    def swiglu_fp8_tensor(self, x, scale):
        """SwiGLU of x [M, 2K] into per-tensor e4m3 with the given scale."""
        m, k = x.shape[0], x.shape[1] // 2
        row = torch.empty(m, k, dtype=torch.float8_e4m3fn, device=x.device)
        amax = torch.zeros(1, dtype=torch.float32, device=x.device)
        sinv = torch.empty(1, dtype=torch.float32, device=x.device)
        self._check(self.lib.te_swiglu_fp8_tensor(
            x.data_ptr(), m, k, row.data_ptr(), scale.data_ptr(), amax.data_ptr(),
            sinv.data_ptr(), self._stream()), "swiglu_fp8_tensor")
        return row, sinv, amax


def add_argument(ap):
    """The --te option of the FP8 benchmarks (formats_bench.py,
    fp8_block_bench.py)."""
    ap.add_argument("--te", default=None,
                    help="libte_shim.so (bench/formats/build_te_shim.sh): add "
                         "TransformerEngine's FP8 kernels as peers")


def from_args(args):
    """TE of --te, or None."""
    return TE(args.te) if args.te else None
