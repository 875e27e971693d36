// expected-error @+1 {{'_mlir_apfloat_convert' is declared with another type}}
func.func private @_mlir_apfloat_convert(i32) -> i64
func.func @f(%a: f32) -> f8E4M3FN {
  %0 = arith.truncf %a : f32 to f8E4M3FN
  return %0 : f8E4M3FN
}

// -----

func.func @g(%a: f32) -> f8E4M3FN {
  // expected-error @+1 {{fusion-lower-float8-casts: only to_nearest_even truncf to an 8-bit float is lowered}}
  %0 = arith.truncf %a to_nearest_away : f32 to f8E4M3FN
  return %0 : f8E4M3FN
}
