// RUN: fusion-opt --help | FileCheck %s
// RUN: fusion-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS

// `fusion-opt --help` names the tool and lists the fusion dialect among the
// registered dialects.
// CHECK: OVERVIEW: fusion-opt: activation/quantize and paired-projection fusion driver
// CHECK: Available Dialects:{{.*}} fusion,
// DIALECTS: fusion
