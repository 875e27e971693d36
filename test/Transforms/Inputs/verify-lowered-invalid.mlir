llvm.func @f(%a: f32) -> f32 {
  // expected-error @+1 {{the pipeline did not lower 'arith.addf' to the LLVM dialect}}
  %0 = arith.addf %a, %a : f32
  llvm.return %0 : f32
}
