# device_env.sh - sourced by the device scripts of this folder (device_run.sh,
# stream_variants.sh, colt_variants.sh): the output folder $OUT (default
# ./mxfp8-out, created), the binaries' folder B=.devbin, and a library path
# that finds libfusion_rt and the cuBLAS it links (from the toolkit or from
# the nvidia-cublas wheel beside torch).
OUT=${OUT:-$PWD/mxfp8-out}
mkdir -p "$OUT"
B=.devbin
CB=$(python3 -c "import nvidia.cublas as m; print(list(m.__path__)[0] + '/lib')" 2>/dev/null)
export LD_LIBRARY_PATH=$PWD/$B:$CB:/usr/local/cuda/lib64:$LD_LIBRARY_PATH

# torchao from .whl/ (the FP4 and FP8 peers), where a wheel was brought:
# installed into /tmp/site and put on PYTHONPATH.
use_torchao_wheel() {
  if ls .whl/torchao*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/torchao*.whl && export PYTHONPATH=/tmp/site
  fi
}
