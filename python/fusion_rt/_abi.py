"""The C ABI of libfusion_rt (runtime/include/fusion_rt.h) through ctypes.

Mirrors the header's structs and enums, finds and loads the library, builds
tensor views from torch tensors and turns a failing status into an exception
that carries fusion_rt_last_error_message(). Nothing here is compiled against
torch: the package talks to the runtime only through this module.
"""
import ctypes
import os
import sys
import threading

ABI_VERSION = 3  # FUSION_RT_ABI_VERSION of the header this module mirrors
MAX_RANK = 4

# ------------------------------------------------------------------ enums ----
# Names accepted by the Python API -> the header's enum values.

DTYPE = {"bf16": 0, "f16": 1, "f32": 2, "f8e4m3": 3, "f8e5m2": 4, "f4e2m1": 5,
         "e8m0": 6}
FORMAT = {"mxfp8_e4m3": 0, "mxfp8_e5m2": 1, "mxfp4": 2, "nvfp4": 3,
          "fp8_e4m3": 4, "fp8_e5m2": 5, "fp8_block_e4m3": 6, "fp8_block_e5m2": 7}
SCALE_ROUNDING = {"rceil": 0, "floor": 1, "ceil": 2, "even": 3}
NAN_POLICY = {"propagate": 0, "ignore": 1}
DIRECTION = {"rowwise": 0, "colwise": 1, "both": 2}
COLWISE_LAYOUT = {"same": 0, "transposed": 1}
SCALE_LAYOUT = {"compact": 0, "swizzled": 1}
NVFP4_BLOCK = {"1d": 0, "2d": 1}
ELEM_ROUNDING = {"rne": 0, "stochastic": 1}
TENSOR_SCALING = {"current": 0, "delayed": 1}
ZERO_SCALE = {"exact": 0, "one": 1, "min_normal": 2}
NVFP4_RECIPE = {"te": 0, "torchao": 1, "torchao_block": 2, "multiply": 3,
                "multiplier": 4, "reciprocal": 5}
ACT = {"identity": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4,
       "qgelu": 5, "srelu": 6, "swiglu": 7, "geglu": 8, "reglu": 9,
       "qgeglu": 10, "sreglu": 11, "clamped_swiglu": 12, "geglu_erf": 13}
GATED_ACTS = ("swiglu", "geglu", "reglu", "qgeglu", "sreglu", "clamped_swiglu",
              "geglu_erf")
EPILOGUE = {"none": 0, "bias": 1, "sigmoid": 2, "silu": 3,
            "softplus_bias_scale": 4, "softplus_log_bias_scale": 5,
            "softplus_stable_bias_scale": 6}
ACC_ROUND = {"none": 0, "bf16": 1, "f16": 2, "bf16_with_bias": 3, "f16_with_bias": 4}

STATUS = {0: "FUSION_RT_STATUS_SUCCESS", 1: "FUSION_RT_STATUS_NULL_POINTER",
          2: "FUSION_RT_STATUS_MISALIGNED", 3: "FUSION_RT_STATUS_BAD_SHAPE",
          4: "FUSION_RT_STATUS_BAD_DTYPE", 5: "FUSION_RT_STATUS_BAD_VALUE",
          6: "FUSION_RT_STATUS_UNSUPPORTED", 7: "FUSION_RT_STATUS_BACKEND_ERROR",
          8: "FUSION_RT_STATUS_OUT_OF_MEMORY"}


def enum_value(table, name, what):
    """table[name], or a ValueError that lists the accepted names."""
    try:
        return table[name]
    except (KeyError, TypeError):
        raise ValueError("fusion_rt: %s = %r is not one of %s"
                         % (what, name, ", ".join(table))) from None


# ---------------------------------------------------------------- structs ----


class Tensor(ctypes.Structure):
    """fusion_rt_tensor: sizes and strides in elements."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("sizes", ctypes.c_int64 * MAX_RANK),
                ("strides", ctypes.c_int64 * MAX_RANK)]


class QuantScheme(ctypes.Structure):
    """fusion_rt_quant_scheme."""
    _fields_ = [("format", ctypes.c_int32), ("scale_rounding", ctypes.c_int32),
                ("nan_policy", ctypes.c_int32), ("direction", ctypes.c_int32),
                ("colwise_layout", ctypes.c_int32), ("scale_layout", ctypes.c_int32),
                ("nvfp4_block", ctypes.c_int32), ("elem_rounding", ctypes.c_int32),
                ("tensor_scaling", ctypes.c_int32), ("amax_epsilon", ctypes.c_float),
                ("force_pow2_scale", ctypes.c_int32), ("zero_scale", ctypes.c_int32),
                ("nvfp4_recipe", ctypes.c_int32), ("block_rows", ctypes.c_int32),
                ("block_cols", ctypes.c_int32),
                ("seed", ctypes.c_uint64), ("offset", ctypes.c_uint64)]


class Activation(ctypes.Structure):
    """fusion_rt_activation."""
    _fields_ = [("kind", ctypes.c_int32), ("backward", ctypes.c_int32),
                ("intermediate_dtype", ctypes.c_int32), ("limit", ctypes.c_float),
                ("offset", ctypes.c_float), ("alpha", ctypes.c_float)]


class QuantOutputs(ctypes.Structure):
    """fusion_rt_quant_outputs (a zeroed struct = every view absent)."""
    _fields_ = [(n, Tensor) for n in ("rowwise_data", "rowwise_scales", "colwise_data",
                                      "colwise_scales", "amax", "scale_inv", "dbias",
                                      "scale")]


class QuantShapes(ctypes.Structure):
    """fusion_rt_quant_shapes."""
    _fields_ = [(n, ctypes.c_int64 * 2) for n in ("rowwise_data", "rowwise_scales",
                                                  "colwise_data", "colwise_scales")]


class Epilogue(ctypes.Structure):
    """fusion_rt_epilogue."""
    _fields_ = [("kind", ctypes.c_int32), ("accumulator_round", ctypes.c_int32),
                ("bias", Tensor), ("scale", Tensor)]


class PairedProjection(ctypes.Structure):
    """fusion_rt_paired_projection."""
    _fields_ = [("lhs", Tensor), ("weight0", Tensor), ("weight1", Tensor),
                ("epilogue0", Epilogue), ("epilogue1", Epilogue),
                ("gated_kind", ctypes.c_int32), ("accumulate_dtype", ctypes.c_int32),
                ("out0", Tensor), ("out1", Tensor)]


# ---------------------------------------------------------------- loading ----

LIB_NAME = "libfusion_rt.so"


class LibraryNotFound(OSError):
    """libfusion_rt.so was not found or is not the ABI this package mirrors."""


def candidates():
    """Paths tried in order: $FUSION_RT_LIBRARY (a file or a folder; when set,
    only it), the package folder, $FUSION_RT_PREFIX/lib, sys.prefix/lib, then
    the dynamic loader's own search (LD_LIBRARY_PATH, rpath, ldconfig)."""
    env = os.environ.get("FUSION_RT_LIBRARY")
    if env:
        return [os.path.join(env, LIB_NAME) if os.path.isdir(env) else env]
    out = [os.path.join(os.path.dirname(os.path.abspath(__file__)), LIB_NAME)]
    prefix = os.environ.get("FUSION_RT_PREFIX")
    for p in ([prefix] if prefix else []) + [sys.prefix]:
        out += [os.path.join(p, "lib", LIB_NAME), os.path.join(p, "lib64", LIB_NAME)]
    out.append(LIB_NAME)
    return out


def _declare(lib):
    P = ctypes.POINTER
    c_int, vp = ctypes.c_int, ctypes.c_void_p
    sigs = {
        "fusion_rt_abi_version": (ctypes.c_int32, []),
        "fusion_rt_status_string": (ctypes.c_char_p, [c_int]),
        "fusion_rt_last_error_message": (ctypes.c_char_p, []),
        "fusion_rt_has_cuda": (ctypes.c_int32, []),
        "fusion_rt_synchronize": (c_int, [vp]),
        "fusion_rt_quant_scheme_init": (None, [P(QuantScheme)]),
        "fusion_rt_activation_init": (None, [P(Activation)]),
        "fusion_rt_quant_shapes_for": (c_int, [P(QuantScheme), ctypes.c_int64,
                                               ctypes.c_int64, ctypes.c_int32,
                                               P(QuantShapes)]),
        "fusion_rt_quantize": (c_int, [P(Tensor), P(QuantScheme), P(QuantOutputs),
                                       vp, vp]),
        "fusion_rt_act_quantize": (c_int, [P(Tensor), P(Tensor), P(Activation),
                                           P(QuantScheme), P(QuantOutputs), vp, vp]),
        "fusion_rt_gated_act_quantize": (c_int, [P(Tensor), P(Tensor), P(Tensor),
                                                 P(Activation), P(QuantScheme),
                                                 P(QuantOutputs), vp, vp]),
        "fusion_rt_activation_apply": (c_int, [P(Tensor), P(Tensor), P(Tensor),
                                               P(Activation), P(Tensor), P(Tensor),
                                               vp, vp]),
        "fusion_rt_dequantize": (c_int, [P(QuantScheme), P(QuantOutputs), ctypes.c_int32,
                                         P(Tensor), vp, vp]),
        "fusion_rt_paired_projection_run": (c_int, [P(PairedProjection), vp, vp]),
        "fusion_rt_set_tuning": (c_int, [ctypes.c_char_p, ctypes.c_char_p]),
        "fusion_rt_get_tuning": (c_int, [ctypes.c_char_p, P(ctypes.c_int64)]),
        "fusion_rt_paired_projection_quantize": (c_int, [P(PairedProjection), ctypes.c_int32,
                                                         P(QuantScheme), P(QuantOutputs),
                                                         vp, vp]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


_lib = None
_lib_lock = threading.Lock()


def library():
    """The loaded runtime (ctypes.CDLL), loaded on first use."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is None:
            errors = []
            for path in candidates():
                if os.sep in path and not os.path.exists(path):
                    errors.append("%s: no such file" % path)
                    continue
                try:
                    lib = ctypes.CDLL(path)
                except OSError as e:
                    errors.append("%s: %s" % (path, e))
                    continue
                _declare(lib)
                v = lib.fusion_rt_abi_version()
                if v != ABI_VERSION:
                    raise LibraryNotFound(
                        "fusion_rt: %s has ABI version %d, this package needs %d"
                        % (path, v, ABI_VERSION))
                lib.fusion_rt_path = path
                _lib = lib
                break
            else:
                raise LibraryNotFound(
                    "fusion_rt: %s not found; set FUSION_RT_LIBRARY to the library "
                    "(or its folder), or FUSION_RT_PREFIX to an install prefix. "
                    "Tried:\n  %s" % (LIB_NAME, "\n  ".join(errors)))
    return _lib


# ----------------------------------------------------------------- errors ----


class FusionRtError(RuntimeError):
    """A runtime call returned a status other than SUCCESS. `status` is the
    fusion_rt_status value, `status_name` its name; the message is the
    runtime's fusion_rt_last_error_message()."""

    def __init__(self, status, message, entry_point):
        self.status = status
        self.status_name = STATUS.get(status, "status %d" % status)
        self.entry_point = entry_point
        super().__init__("%s: %s (%s)" % (entry_point, message, self.status_name))


def check(status, entry_point):
    """Raises FusionRtError for a failing status (message read on this thread)."""
    if status != 0:
        msg = library().fusion_rt_last_error_message()
        raise FusionRtError(status, msg.decode("utf-8", "replace") if msg else "",
                            entry_point)
