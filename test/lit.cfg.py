# -*- Python -*- lit configuration for the fusion-opt test suite.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FUSION"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fusion_obj_root, "test")

# Disallow reusing FileCheck variables across CHECK-LABEL blocks.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%fusion_libs", config.fusion_lib_dir))
config.substitutions.append(("%fusion_src", config.fusion_src_root))
config.substitutions.append(("%fusion_obj_root", config.fusion_obj_root))

# Shared libraries for mlir-runner: the MLIR runner utils and the runtime's
# C-interface wrappers (which pull in libfusion_rt).
config.substitutions.append(
    ("%mlir_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_runner_utils" + config.llvm_shlib_ext)))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_c_runner_utils" + config.llvm_shlib_ext)))
config.substitutions.append(
    ("%mlir_apfloat_wrappers",
     os.path.join(config.mlir_lib_dir, "libmlir_apfloat_wrappers" + config.llvm_shlib_ext)))
config.substitutions.append(
    ("%fusion_rt_mlir",
     os.path.join(config.fusion_lib_dir, "libfusion_rt_mlir" + config.llvm_shlib_ext)))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.fusion_tools_dir, config.llvm_tools_dir]
tools = ["fusion-opt", "mlir-opt", "mlir-runner"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The AOT example is built only where the CUDA toolkit (cudart) exists.
if os.path.exists(os.path.join(config.fusion_tools_dir, "fusion-aot-swiglu")):
    config.available_features.add("aot-example")

# The kernel inventory exists where the CUDA toolkit (nvcc) was found.
if os.path.exists(os.path.join(config.fusion_obj_root, "share", "fusion",
                               "kernel-inventory.tsv")):
    config.available_features.add("kernel-inventory")
