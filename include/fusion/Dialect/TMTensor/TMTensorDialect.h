//===- TMTensorDialect.h - the tm_tensor subset ------------------*- C++
//-*-===//
//
// torch-mlir's tm_tensor.scan / scatter / yield, parsed by fusion-opt
// (TMTensorOps.td).
//
//===----------------------------------------------------------------------===//
#ifndef FUSION_DIALECT_TMTENSOR_TMTENSORDIALECT_H
#define FUSION_DIALECT_TMTENSOR_TMTENSORDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fusion/Dialect/TMTensor/TMTensorDialect.h.inc"

#define GET_OP_CLASSES
#include "fusion/Dialect/TMTensor/TMTensorOps.h.inc"

#endif // FUSION_DIALECT_TMTENSOR_TMTENSORDIALECT_H
