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
