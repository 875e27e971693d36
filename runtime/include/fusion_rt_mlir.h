/*===- fusion_rt_mlir.h - the lowering's ABI with libfusion_rt_mlir -------===*
 *
 * The contract between `fusion-lower-to-runtime` (the compiler:
 * lib/Conversion/FusionToRuntime/LowerToRuntime.cpp) and the C-interface
 * entry points that lowered IR calls (libfusion_rt_mlir:
 * lib/ExecutionEngine/FusionRuntimeWrappers.cpp). Both sides include this
 * header and build their tables and scalar lists from it; static_asserts on
 * each side tie their code to it. Bump FUSION_RT_MLIR_ABI_VERSION on any
 * change (docs/lowering.md, "Runtime calls").
 *
 * Each fusion op becomes `int32_t _mlir_ciface_<entry>(scalars..., table)`:
 * the scalars of its kind (below, in order), then a memref<Nx12xi64> with one
 * row per buffer (the op's operands, then its destinations).
 *
 *===----------------------------------------------------------------------===*/
#ifndef FUSION_RT_MLIR_H
#define FUSION_RT_MLIR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this contract; fusion_rt_mlir_abi_version() returns the one
 *  libfusion_rt_mlir was built with. 2: the quantizing paired projection;
 *  3: the scheme's NVFP4 recipe; 4: the FP8 block formats' block width;
 *  5: their block height (2D blocks). */
#define FUSION_RT_MLIR_ABI_VERSION 5

/** Columns of one row of the buffer table (sizes and strides in elements,
 *  rank <= 4; unused size/stride columns are 0). */
enum fusion_rt_mlir_table_column {
  FUSION_RT_MLIR_COL_POINTER = 0, /**< aligned pointer */
  FUSION_RT_MLIR_COL_OFFSET = 1,  /**< memref offset, in elements */
  FUSION_RT_MLIR_COL_RANK = 2,
  FUSION_RT_MLIR_COL_DTYPE = 3,   /**< fusion_rt_dtype, or a code below */
  FUSION_RT_MLIR_COL_SIZES = 4,   /**< 4 columns */
  FUSION_RT_MLIR_COL_STRIDES = 8, /**< 4 columns */
  FUSION_RT_MLIR_TABLE_WIDTH = 12
};

/** Element codes of the table beyond fusion_rt_dtype (0..6). */
enum fusion_rt_mlir_dtype {
  FUSION_RT_MLIR_DTYPE_I64 = 7,        /**< the rng operand (seed, offset) */
  FUSION_RT_MLIR_DTYPE_PACKED_FP4 = 8  /**< i8 holding two e2m1 values */
};

/** The quantization scheme's scalars: these i32 in this order, then the
 *  amax epsilon as one f32. */
enum fusion_rt_mlir_scheme_param {
  FUSION_RT_MLIR_SCHEME_FORMAT = 0,
  FUSION_RT_MLIR_SCHEME_DIRECTION,
  FUSION_RT_MLIR_SCHEME_SCALE_ROUNDING,
  FUSION_RT_MLIR_SCHEME_NAN_POLICY,
  FUSION_RT_MLIR_SCHEME_COLWISE_LAYOUT,
  FUSION_RT_MLIR_SCHEME_SCALE_LAYOUT,
  FUSION_RT_MLIR_SCHEME_NVFP4_2D,
  FUSION_RT_MLIR_SCHEME_ELEM_ROUNDING,
  FUSION_RT_MLIR_SCHEME_TENSOR_SCALING,
  FUSION_RT_MLIR_SCHEME_ZERO_SCALE,
  FUSION_RT_MLIR_SCHEME_POW2_SCALE,
  FUSION_RT_MLIR_SCHEME_NVFP4_RECIPE,
  /** FP8 block formats: elements per scale (block_cols); 0 otherwise. */
  FUSION_RT_MLIR_SCHEME_BLOCK_COLS,
  /** FP8 block formats: rows per scale (block_rows, > 1: 2D blocks); 0
   *  otherwise. */
  FUSION_RT_MLIR_SCHEME_BLOCK_ROWS,
  FUSION_RT_MLIR_SCHEME_I32_PARAMS /**< count: 14 */
};

/** The activation's scalars: kind, backward, intermediate dtype (i32), then
 *  limit, offset, alpha (f32). */
enum { FUSION_RT_MLIR_ACT_I32_PARAMS = 3, FUSION_RT_MLIR_ACT_F32_PARAMS = 3 };

/** The paired projection's scalars (i32): epilogue kinds 0 and 1, gated kind
 *  (-1: none), kn, accumulator roundings 0 and 1, then whether bias0,
 *  scale0, bias1, scale1 are given. The quantizing form adds the
 *  intermediate dtype and the scheme's scalars. */
enum { FUSION_RT_MLIR_PAIRED_I32_PARAMS = 10 };

/* Entry points (without the `_mlir_ciface_` prefix), per op:
 *   quantize                   scheme, table
 *   act_quantize               activation, dbias (i32), scheme, table
 *   gated_act_quantize         activation, input count (i32), scheme, table
 *   paired_projection          paired, table
 *   paired_projection_quantize paired, intermediate dtype (i32), scheme, table */
#define FUSION_RT_MLIR_QUANTIZE "fusion_rt_mlir_quantize"
#define FUSION_RT_MLIR_ACT_QUANTIZE "fusion_rt_mlir_act_quantize"
#define FUSION_RT_MLIR_GATED_ACT_QUANTIZE "fusion_rt_mlir_gated_act_quantize"
#define FUSION_RT_MLIR_PAIRED_PROJECTION "fusion_rt_mlir_paired_projection"
#define FUSION_RT_MLIR_PAIRED_PROJECTION_QUANTIZE                             \
  "fusion_rt_mlir_paired_projection_quantize"

/** FUSION_RT_MLIR_ABI_VERSION of the libfusion_rt_mlir actually loaded. */
int32_t fusion_rt_mlir_abi_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FUSION_RT_MLIR_H */
