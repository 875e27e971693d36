# te_env.sh - sourced by the device scripts of this folder that run
# TransformerEngine 2.20 (te_device.sh, cast_probe_device.sh,
# grid_ab_device.sh), from the repository root: TE's library unpacked from
# .te/libtransformer_engine.so.xz into /tmp/te_lib (once while the machine
# is warm) and a library path that finds it, the shim in .te/ and TE's
# dependencies (cuDNN 9, NCCL, cuBLAS 13) in the nvidia wheels beside the
# device's torch. Returns 3 where the library cannot be unpacked.
te_env() {
  mkdir -p /tmp/te_lib
  [ -f /tmp/te_lib/libtransformer_engine.so ] ||
    python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
      .te/libtransformer_engine.so.xz /tmp/te_lib/libtransformer_engine.so || return 3
  local sp nv
  sp=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
  nv=$(ls -d "$sp"/nvidia/*/lib "$sp"/nvidia/cu13/lib 2>/dev/null | tr '\n' ':')
  export LD_LIBRARY_PATH=/tmp/te_lib:$PWD/.te:${nv}/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
}

# TE_ARG: the benchmarks' --te argument where TE's shim loads and a bf16
# current-scaling cast + transpose runs (its amax printed beside torch's),
# else empty with a line saying so.
te_smoke() {
  TE_ARG=""
  if python3 -c "
import torch, te_peer
te = te_peer.TE('.te/libte_shim.so')
x = torch.randn(256, 512, device='cuda').to(torch.bfloat16)
r, c, s, a = te.fp8_tensor(x, transpose=True)
print('TE smoke: current scaling amax', a.item(), 'ref', x.float().abs().max().item())
torch.cuda.synchronize()"; then TE_ARG="--te .te/libte_shim.so"; else echo "TE smoke test failed: TE arms skipped"; fi
}
