// RUN: not fusion-opt %s 2>&1 | FileCheck %s
// NOT-A-PROGRAM: malformed on purpose.
// RUN: not fusion-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not fusion-opt %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// Malformed input gets a diagnostic and a non-zero exit status, never a
// crash (`not` fails on a crash: it would see a signal, not exit code 1).

// CHECK: error: custom op 'fusion.quantize' expected 'outs'
// SPLIT: error:
// MISSING: cannot open input file
func.func @truncated(%x: tensor<4x64xbf16>) {
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3, rowwise>
  return
}

// -----

func.func @garbage_attr(%x: tensor<4x64xbf16>) {
  %d, %s = fusion.quantize %x as quant<mxfp8_e4m3 : (tensor<4x64xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return
}
