#!/usr/bin/env python3
"""The frontend corpus on the GPU: each program of test/Frontend/corpus,
lowered by fusion-opt's --fusion-pipeline (frontend=torch, generic-alloc),
compiled ahead of time and run on the device machine twice: with host
buffers (the runtime's CPU backend) and with CUDA managed buffers (every
fusion op on the CUDA backend). The GPU outputs must equal the CPU outputs
byte for byte, and are compared with torch eager's bytes (NAME.io.json).

  build (here):     device_corpus.py build OUT_DIR [PROGRAM.mlir ...]
      OUT_DIR gets one executable per program (device_driver.cpp linked
      with the program's object), its .io.json and the runtime's MLIR entry
      points (libfusion_rt_mlir.so); libfusion_rt.so (sm_90a) goes beside
      them by hand. Programs whose unfused code needs LLVM's APFloat
      wrappers (FP8 casts left unfused) are listed as skipped: they contain
      no fusion op that could run on the GPU.
  run (device):     device_corpus.py run OUT_DIR
      Needs `ncu` to confirm that the managed run launched CUDA kernels.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "Frontend"))
import run_corpus  # noqa: E402  (the harness and the output parser)

LLVM = "/usr/lib/llvm-22/bin"


def device_harness(program, io):
    """run_corpus's harness, with the inputs copied into allocated buffers
    (so that they live where the driver allocates) and main renamed."""
    src = run_corpus.harness(program, io)
    src = src.replace("func.func @main() {", "func.func @corpus_main() {", 1)
    out = []
    for line in src.splitlines():
        m = re.match(r'\s*(%in\d+) = arith\.constant dense<"0x[0-9A-Fa-f]*"> : (.*)$', line)
        # Dynamic sizes: the static constant is cast; the copy is too.
        d = re.match(r'\s*(%in\d+) = tensor\.cast (%s\d+) : (.*) to (.*)$', line)
        out.append(line)
        if m:
            out.append(f"  {m.group(1)}c = bufferization.alloc_tensor() "
                       f"copy({m.group(1)}) : {m.group(2)}")
        elif d:
            out.append(f"  {d.group(2)}c = bufferization.alloc_tensor() "
                       f"copy({d.group(2)}) : {d.group(3)}")
            out.append(f"  {d.group(1)}c = tensor.cast {d.group(2)}c : "
                       f"{d.group(3)} to {d.group(4)}")
        elif "call @forward(" in line:
            out[-1] = re.sub(r"(%in\d+)(?=[,)])", r"\1c", line)
    return "\n".join(out) + "\n"


def build(out_dir, programs):
    os.makedirs(out_dir, exist_ok=True)
    fusion_opt = os.path.join(ROOT, "build", "bin", "fusion-opt")
    shutil.copy(os.path.join(ROOT, "build", "lib", "libfusion_rt_mlir.so"), out_dir)
    driver = os.path.join(HERE, "device_driver.cpp")
    skipped = {}
    for prog in programs:
        name = os.path.basename(prog)[:-len(".mlir")]
        io = json.load(open(prog[:-len(".mlir")] + ".io.json"))
        src = device_harness(prog, io)
        work = os.path.join(out_dir, name + ".build")
        os.makedirs(work, exist_ok=True)
        low = subprocess.run(
            [fusion_opt, "-", "--pass-pipeline=builtin.module(fusion-pipeline"
             "{frontend=torch generic-alloc=true})", "-o", f"{work}/l.mlir"],
            input=src, capture_output=True, text=True)
        if low.returncode:
            skipped[name] = "fusion-opt: " + low.stderr.strip()[:300]
            continue
        subprocess.run([f"{LLVM}/mlir-translate", "--mlir-to-llvmir",
                        f"{work}/l.mlir", "-o", f"{work}/l.ll"], check=True)
        subprocess.run([f"{LLVM}/llc", "-O2", "-relocation-model=pic",
                        "-filetype=obj", f"{work}/l.ll", "-o", f"{work}/l.o"],
                       check=True)
        nm = subprocess.run(["nm", "-u", f"{work}/l.o"], capture_output=True,
                            text=True).stdout
        if "_mlir_apfloat_convert" in nm:
            skipped[name] = ("its unfused FP8 casts need libmlir_apfloat_wrappers "
                             "(LLVM); no fusion op runs on the GPU")
            shutil.rmtree(work)
            continue
        link = subprocess.run(
            ["g++", "-O1", "-o", os.path.join(out_dir, name), driver,
             f"{work}/l.o", "-I/usr/local/cuda/include", f"-L{out_dir}",
             "-lfusion_rt_mlir", f"-L{ROOT}/build/runtime/lib", "-lfusion_rt",
             "-L/usr/local/cuda/lib64", "-lcudart", "-Wl,-rpath,$ORIGIN"],
            capture_output=True, text=True)
        shutil.rmtree(work)
        if link.returncode:
            skipped[name] = "link: " + link.stderr.strip()[:300]
            continue
        shutil.copy(prog[:-len(".mlir")] + ".io.json", out_dir)
        print("built", name)
    json.dump(skipped, open(os.path.join(out_dir, "skipped.json"), "w"), indent=1)
    for k, v in skipped.items():
        print("skipped", k, ":", v)


# What the GPU may differ in, per program: the paired projections sum K in
# another order on the GPU than the CPU reference's sequential fp32
# (docs/paired-projections.md), so their outputs are compared within the
# bound that test/Frontend/corpus.test states against torch (1e-6 of the
# output's largest magnitude for f32, one ulp for bf16, one FP8 code step);
# every other program must give the CPU's bytes exactly.
PAIRED = ("gdn", "ffn", "oss_mlp", "oss_expert")
EXACT = (0, 0, 0.0)
# Against torch, the programs whose CPU run corpus.test also compares with a
# bound, or not with torch at all (None: torch-mlir's IR computes GELU-tanh
# in bf16, torch eager in f32; corpus.test compares it with the unfused
# program instead; silu_mxfp8_even_bf16: a NaN input, outside
# frontend=torch's finite-input contract, under which the fused quantizer
# makes the NaN block NaN where torch's x / Inf gives zeros; corpus.test
# compares its unfused program with torch).
TORCH = {"silu_mxfp8_even_bf16": None,
         "swiglu_mxfp8_rceil_bf16": (1, 0, 0.0),
         "swiglu_bwd_mxfp8_rceil_bf16": (1, 0, 0.0),
         "swiglu_fp8_group128_bf16": (1, 0, 0.0079),
         "swiglu_vllm_group_bf16": (1, 0, 0.0079),
         "swiglu_fp8_group128_ue8m0_bf16": (1, 0, 0.0079),
         "swiglu_ao_fp8_groups_bf16": (1, 0, 0.0),
         "gelu_tanh_mxfp8_rceil_bf16": None,
         "geglu_mxfp8_rceil_bf16": (1, 0, 0.0),
         "swiglu_chunk_mxfp8_rceil_bf16": (1, 0, 0.0),
         "gelu_bwd_dbias_mxfp8_rceil_f32": (0, 0, 1e-6),
         "silu_bwd_dbias_mxfp8_rceil_bf16": (0, 4, 0.0),
         "geglu_tanh_bwd_mxfp8_rceil_bf16": None,
         "gelu_fp8_pertoken_recip_bf16": (1, 0, 0.0),
         "both_gelu_mxfp8_floor_f32": (1, 0, 0.0),
         "col_swiglu_mxfp8_rceil_bf16": (1, 0, 0.0),
         "both_gelu_mxfp8_floor_f32_dyn": (1, 0, 0.0),
         "col_swiglu_mxfp8_rceil_bf16_dyn": (1, 0, 0.0),
         "swiglu_fp8_group128_bf16_dyn": (1, 0, 0.0079),
         "swiglu_split_fp8_group_bf16": (1, 0, 0.0079),
         "swiglu_chunk_mxfp8_rceil_bf16_dyn": (1, 0, 0.0),
         # The FFN front to FP8 with f32 scales (corpus.test's P_FRONT_Q:
         # one code step, scales within 0.0079 of the largest).
         "ffn13_fp8group_bf16": (1, 1, 0.0079),
         "ffn13_vllm_group_bf16": (1, 1, 0.0079),
         "ffn13_fp8_tensorwise_bf16": (1, 1, 0.0079),
         "ffn_cat_vllm_group_bf16": (1, 1, 0.0079),
         # FP8 delayed scaling after a bf16 SwiGLU: one code step, and the
         # amax for the history within one bf16 ulp (2^-7 of it).
         "delayed_swiglu_fp8_bf16": (1, 0, 0.008),
         # The FFN front to FP8 with delayed scaling: one code step, and the
         # amax of the bf16 gated value within one bf16 ulp.
         "ffn_delayed_fp8_bf16": (1, 1, 0.008),
         "ffn_delayed_fp8_bf16_w13_3d": (1, 1, 0.008),
         # GPT-OSS's clamped SwiGLU, op by op in bf16 in torch-mlir's IR:
         # the standalone one has one MX block whose amax torch rounds onto
         # a power of two (corpus.test compares it with --scale-steps 1);
         # the fronts within one code step, their f32 group scales within
         # 0.0079 of the largest.
         "oss_swiglu_mxfp8_bf16": None,
         "oss_mlp_mxfp8_bf16": (1, 1, 0.0079),
         "oss_mlp_fp8group_bf16_3d": (1, 1, 0.0079),
         "oss_expert_hf_mxfp8_bf16": (1, 1, 0.0079),
         # The SwiGLU backward written as TE's references write it, to 1x128
         # groups: corpus.test compares its codes with torch's byte for byte
         # and its f32 group scales within one ulp (the runtime's dswiglu
         # rounds in another order than the IR's); on the GPU the expf of
         # CUDA against glibc's may move a code one step (docs/numerics.md).
         "dswiglu_hand_fp8group_bf16": (1, 1, 0.0)}
# Programs with an f32 output computed from transcendental functions (the
# fused dgelu's dbias column sum): the GPU's expf/FMAs against the CPU's,
# within corpus.test's bound against torch.
CPU_BOUND = {"gelu_bwd_dbias_mxfp8_rceil_f32": (0, 0, 1e-6),
             # CUDA's expf against glibc's: one ulp of the f32 sigmoid can
             # move a code one step and a group scale one ulp.
             "dswiglu_hand_fp8group_bf16": (1, 1, 0.0),
             # The GPU's summation order moves a bf16 gated value by an ulp,
             # and with it the tensor amax of the FP8 delayed FFN front.
             "ffn_delayed_fp8_bf16": (1, 1, 0.008),
             "ffn_delayed_fp8_bf16_w13_3d": (1, 1, 0.008)}


def tolerance(name):
    """(GPU vs CPU, GPU vs torch) bounds of a program."""
    if name.startswith(PAIRED):
        return CPU_BOUND.get(name, (1, 1, 1e-6)), TORCH.get(name, (1, 1, 1e-6))
    return CPU_BOUND.get(name, EXACT), TORCH.get(name, EXACT)


def compare(got, want, io, tol):
    """(elements outside the tolerance, elements that differ at all)."""
    steps, ulps, rtol = tol
    bad = differ = 0
    for g_out, w_out, rec in zip(got, want, io["outputs"]):
        atol = 0.0
        if rtol and rec["dtype"] in ("f32", "bf16", "f16"):
            vals = [abs(run_corpus.value(rec["dtype"], e)) for e in w_out]
            atol = rtol * max([v for v in vals if v == v and v != float("inf")] or [0.0])
        for g, e in zip(g_out, w_out):
            same = g == e or (run_corpus.is_nan(rec["dtype"], g) and
                              run_corpus.is_nan(rec["dtype"], e))
            differ += not same
            bad += not run_corpus.close(rec["dtype"], g, e, steps, ulps, atol)
    return bad, differ


def kernel_names(ncu_csv):
    """Short names of the kernels an `ncu --csv` run lists."""
    names, col = set(), None
    for row in csv.reader(ncu_csv.splitlines()):
        if col is None:
            col = row.index("Kernel Name") if "Kernel Name" in row else None
        elif len(row) > col:
            n = row[col].replace("(anonymous namespace)::", "")
            n = n.replace("<unnamed>::", "")
            n = n.split("(")[0].split("<")[0].split("::")[-1]
            names.add(n.replace("void ", "").strip())
    return sorted(x for x in names if x)


def run(out_dir):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = out_dir + ":" + env.get("LD_LIBRARY_PATH", "")
    names = sorted(f[:-len(".io.json")] for f in os.listdir(out_dir)
                   if f.endswith(".io.json"))
    out_log = os.environ.get("OUT")
    ncu_log = open(os.path.join(out_log, "device_corpus_ncu.log"), "w") \
        if out_log else None
    failures = unsupported = 0
    rows = []
    for name in names:
        exe = os.path.join(out_dir, name)
        io = json.load(open(exe + ".io.json"))
        res = {}
        for mode in ("host", "managed"):
            r = subprocess.run([exe, mode], capture_output=True, text=True,
                               env=env, timeout=120)
            res[mode] = (r.returncode, run_corpus.parse_outputs(r.stdout, io), r.stderr.strip())
        # The kernels the managed run launched (ncu lists every launch).
        kernels = "ncu not found"
        ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
        if os.path.exists(ncu):
            n = subprocess.run([ncu, "--clock-control", "none", "--metrics",
                                "gpu__time_duration.sum", "--csv", exe,
                                "managed"], capture_output=True, text=True,
                               env=env, timeout=300)
            if ncu_log:
                ncu_log.write(f"=== {name}\n{n.stdout}\n{n.stderr}\n")
            kernels = ",".join(kernel_names(n.stdout)) or "none"
        (hrc, hout, herr), (mrc, mout, merr) = res["host"], res["managed"]
        want = [run_corpus.expected(rec) for rec in io["outputs"]]
        tol, torch_tol = tolerance(name)
        if hrc == 0 and mrc and "FUSION_RT_STATUS_UNSUPPORTED" in merr:
            # A scheme the CUDA backend does not implement (the runtime says
            # so and writes nothing; the program asserts on the status).
            status = "NOT ON THE GPU: " + merr.split("failed: ", 1)[-1][:160]
            unsupported += 1
        elif hrc or mrc or hout is None or mout is None:
            status = f"FAIL (exit host {hrc}, managed {mrc}: {(herr or merr)[:200]})"
            failures += 1
        else:
            bad_cpu, diff_cpu = compare(mout, hout, io, tol)
            bad_torch, diff_torch = compare(mout, want, io, torch_tol or EXACT)
            if torch_tol is None:
                bad_torch = 0  # reported, not required (see TORCH)
            total = sum(len(w) for w in want)
            ok = bad_cpu == 0 and bad_torch == 0
            bound = "byte for byte" if tol == EXACT else "within the bound"
            status = (("PASS" if ok else "FAIL") + f" ({bound}): gpu vs cpu "
                      f"{diff_cpu} of {total} elements differ"
                      + (f" ({bad_cpu} outside)" if bad_cpu else "") +
                      f"; gpu vs torch {diff_torch} differ"
                      + (f" ({bad_torch} outside)" if bad_torch else ""))
            failures += not ok
        rows.append((name, status, kernels))
        print(f"{name}: {status}; kernels: {kernels}", flush=True)
    skipped = json.load(open(os.path.join(out_dir, "skipped.json")))
    for k, v in skipped.items():
        print(f"{k}: skipped ({v})")
    print(f"{len(rows) - failures - unsupported} of {len(rows)} programs pass "
          f"on the GPU, {unsupported} use a scheme the CUDA backend does not "
          f"implement, {failures} fail; {len(skipped)} skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "build":
        progs = sys.argv[3:] or sorted(
            os.path.join(ROOT, "test", "Frontend", "corpus", f)
            for f in os.listdir(os.path.join(ROOT, "test", "Frontend", "corpus"))
            if f.endswith(".mlir"))
        build(sys.argv[2], progs)
    elif len(sys.argv) == 3 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2]))
    else:
        print(__doc__)
        sys.exit(2)
