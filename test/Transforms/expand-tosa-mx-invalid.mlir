// RUN: not fusion-opt %s --fusion-pipeline -o /dev/null 2>&1 | FileCheck %s
// NOT-A-PROGRAM for test/Pipeline/every-program.test: upstream's TOSA
// lowering has no rule for tosa.custom; the error is checked here.

// A TOSA op that upstream's TOSA-to-linalg passes (run by
// fusion-expand-tosa-mx on a function that holds TOSA ops) cannot lower: the
// pipeline stops with upstream's diagnostic, not a crash.
// CHECK: error: failed to legalize operation 'tosa.custom'
func.func @main(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %y = tosa.custom %x {operator_name = "my_op", domain_name = "x", implementation_attrs = ""} : (tensor<4x64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
