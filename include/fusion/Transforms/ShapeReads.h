//===- ShapeReads.h - reads of a tensor's sizes --------------*- C++ -*-===//
//
// IR with dynamic sizes reads them with `tensor.dim`, often off a value a
// fusion replaces (an activation, a projection's result): torch-mlir sizes
// its outputs so, and a raised quantizer's destinations are sized so. Such a
// read is no use of the value's elements; the passes resolve it to the size
// the value's producer computes (its reified result shape), so that the
// value has no other user than the one being fused, and so that an erased
// producer leaves no dangling read.
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_TRANSFORMS_SHAPEREADS_H
#define FUSION_TRANSFORMS_SHAPEREADS_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fusion {

/// Whether `user` only reads `value`'s shape in a way resolveShapeReads
/// replaces: a `tensor.dim` with a constant index of a result of an op that
/// reifies its result shapes.
bool isResolvableShapeRead(Operation *user, Value value);

/// Replaces each such `tensor.dim` of `value` by the size its producer
/// computes (ops made for sizes nothing reads are erased again); returns
/// how many it replaced; through `rewriter`, or an IRRewriter of its own.
unsigned resolveShapeReads(RewriterBase &rewriter, Value value);
unsigned resolveShapeReads(Value value);

/// resolveShapeReads for every linalg op result in `root` (its regions'
/// ops) that is read so, until no such read is left that resolves further.
/// Idempotent: the passes call it first and last, so that running a pass
/// twice changes nothing (their rewrites size new values off linalg ops).
void resolveShapeReadsIn(Operation *root);

/// Whether `size` is, provably, the size of `tensor`'s dimension `d`: equal
/// constants, or the same dimension of the same value once both are traced
/// through `tensor.dim`, `tensor.empty` sizes, `tensor.expand_shape` output
/// shapes and destination-style results (a linalg op's result has its
/// init's sizes).
bool isSizeOf(OpFoldResult size, Value tensor, int64_t d);

} // namespace mlir::fusion

#endif // FUSION_TRANSFORMS_SHAPEREADS_H
