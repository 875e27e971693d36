//===- FusionDialect.cpp - The fusion dialect -----------------------------===//
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

using namespace mlir;
using namespace mlir::fusion;

#include "fusion/Dialect/Fusion/IR/FusionDialect.cpp.inc"

void FusionDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "fusion/Dialect/Fusion/IR/FusionOps.cpp.inc"
      >();
}
